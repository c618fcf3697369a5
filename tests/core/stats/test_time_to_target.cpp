// Time to target composed from its parts: the composition of known parts (times, speedup and the
// delta method's interval, exact numbers), a lever that keeps the math reduces to the throughput
// verdict, the delta method agrees with a bootstrap over the parts, runs cut at the cap bound the
// speedup, the words of every table, and the JSON try, the ladder and tune store.
#include <QtTest/QtTest>

#include <cmath>

#include "wb/stats/time_to_target.h"
#include "wb/stats/time_to_target_json.h"

using namespace wb::stats;
using Rates = std::vector<double>;

Q_DECLARE_METATYPE(Rates)

namespace {
bool near(double a, double b, double tol = 1e-9) { return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b)); }

// 2 s start-up, 1000 samples/s, 60 000 samples to target, an evaluation (1 s) every 30 000.
TimeToTargetParts knownParts() {
  TimeToTargetParts p;
  p.baseline_startup_s = p.variant_startup_s = exactly(2);
  p.baseline_train_samples_per_s = exactly(1000);
  p.throughput = exactly(1.25);
  p.keepMath(exactly(60000));
  p.baseline_eval_s = exactly(1);
  p.samples_per_evaluation = 30000;
  return p;
}

std::vector<TargetRun> runsAround(double centre) {
  static const double pattern[] = {1.00, 1.10, 0.90, 1.05, 0.95};
  std::vector<TargetRun> runs;
  for (int i = 0; i < 5; ++i) runs.push_back({centre * pattern[i], true, uint64_t(i)});
  return runs;
}
}  // namespace

class TestTimeToTarget : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void compositionOfKnownParts() {
    TimeToTargetParts p = knownParts();
    p.math_kept = false;
    p.variant_samples = exactly(66000);  // 10 % more samples
    const TimeToTargetEstimate e = composeTimeToTarget(p);
    // Baseline: 2 + 60 000/1000 + 2 evaluations × 1 s = 64 s. Variant: 2 + 66 000/1250 + 2.2 × 1 = 57 s.
    QVERIFY(near(e.baseline_s, 64));
    QVERIFY(near(e.variant_s, 57));
    QVERIFY(near(e.speedup.point, 64.0 / 57.0));
    QVERIFY(near(e.samples_factor, 60000.0 / 66000.0));
    QVERIFY(near(e.throughput_factor, 1.25));
    QCOMPARE(e.log_se, 0.0);  // every part exact: the interval is the point
    QVERIFY(near(e.speedup.lo, e.speedup.point) && near(e.speedup.hi, e.speedup.point));
    QCOMPARE(e.speedup.verdict, Verdict::Faster);
  }

  void deltaIntervalOfKnownParts() {
    // Only the throughput uncertain (se 0.02 on its log, 9 df); 10 s start-up, 100 s of training.
    TimeToTargetParts p;
    p.baseline_startup_s = p.variant_startup_s = exactly(10);
    p.baseline_train_samples_per_s = exactly(1000);
    p.throughput = LogEstimate{1.25, 0.02, 9};
    p.keepMath(exactly(100000));
    const TimeToTargetEstimate e = composeTimeToTarget(p);
    QVERIFY(near(e.speedup.point, 110.0 / 90.0));
    // ∂ ln speedup / ∂ ln throughput = the variant's training share of its time: 80 / 90.
    QVERIFY(near(e.log_se, 80.0 / 90.0 * 0.02, 1e-7));
    QVERIFY(near(e.df, 9));
    const double half = tQuantile(0.975, 9) * e.log_se;
    QVERIFY(near(e.speedup.lo, 110.0 / 90.0 * std::exp(-half), 1e-7));
    QVERIFY(near(e.speedup.hi, 110.0 / 90.0 * std::exp(half), 1e-7));
    QCOMPARE(e.speedup.verdict, Verdict::Faster);
    QCOMPARE(e.parts.front().name, std::string("throughput"));
    QVERIFY(near(e.parts.front().lo, 1.25 * std::exp(-tQuantile(0.975, 9) * 0.02)));
  }

  void mathKeptReducesToTheThroughputVerdict_data() {
    QTest::addColumn<Rates>("baseline");
    QTest::addColumn<Rates>("variant");
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("faster") << Rates{1000, 1010, 990, 1005, 995} << Rates{1100, 1115, 1085, 1102, 1098} << Verdict::Faster;
    QTest::newRow("slower") << Rates{1000, 1010, 990, 1005, 995} << Rates{900, 915, 885, 902, 898} << Verdict::Slower;
    QTest::newRow("within noise") << Rates{1000, 1060, 940, 1030, 970} << Rates{1010, 1000, 1050, 960, 990}
                                  << Verdict::WithinNoise;
    QTest::newRow("sure but below the threshold") << Rates{1000, 1001, 999, 1000, 1000} << Rates{1010, 1011, 1009, 1010, 1010}
                                                  << Verdict::WithinNoise;
  }
  void mathKeptReducesToTheThroughputVerdict() {
    QFETCH(Rates, baseline);
    QFETCH(Rates, variant);
    QFETCH(Verdict, verdict);
    const SpeedupEstimate throughput = pairedRateSpeedup(baseline, variant);
    QCOMPARE(throughput.verdict, verdict);
    TimeToTargetParts p;
    p.baseline_train_samples_per_s = exactly(1000);
    p.throughput = logEstimateOf(throughput);
    p.keepMath(LogEstimate{60000, 0.05, 4});  // the reference runs' spread cancels: both arms need them
    const TimeToTargetEstimate e = composeTimeToTarget(p);
    QVERIFY(near(e.speedup.point, throughput.point));
    QVERIFY(near(e.speedup.lo, throughput.lo, 1e-7));
    QVERIFY(near(e.speedup.hi, throughput.hi, 1e-7));
    QCOMPARE(e.speedup.verdict, verdict);
    QVERIFY(e.math_kept);
    QVERIFY(near(e.samples_factor, 1));
    // With start-up and evaluations the same in both arms the speedup is diluted towards 1 but the
    // interval still excludes 1 exactly when the throughput's does.
    p.baseline_startup_s = p.variant_startup_s = exactly(5);
    p.baseline_eval_s = exactly(1);
    p.samples_per_evaluation = 20000;
    const TimeToTargetEstimate diluted = composeTimeToTarget(p);
    QCOMPARE(diluted.speedup.lo > 1, throughput.lo > 1);
    QCOMPARE(diluted.speedup.hi < 1, throughput.hi < 1);
    QVERIFY(std::fabs(std::log(diluted.speedup.point)) < std::fabs(std::log(throughput.point)));
  }

  void deltaAgreesWithTheBootstrap_data() {
    // Normal parts (many degrees of freedom) with large spreads: only the linearisation differs.
    QTest::addColumn<double>("df");
    QTest::addColumn<double>("spread");
    QTest::newRow("normal parts, 3 % each") << kExactDf << 0.03;
    QTest::newRow("normal parts, 10 % each") << kExactDf << 0.10;
    QTest::newRow("t parts of 30 df, 5 % each") << 30.0 << 0.05;
  }
  void deltaAgreesWithTheBootstrap() {
    QFETCH(double, df);
    QFETCH(double, spread);
    TimeToTargetParts p;
    p.baseline_startup_s = LogEstimate{3, spread, df};
    p.variant_startup_s = LogEstimate{3.5, spread, df};
    p.baseline_train_samples_per_s = exactly(1000);
    p.throughput = LogEstimate{1.3, spread, df};
    p.baseline_samples = LogEstimate{600000, spread, df};
    p.variant_samples = LogEstimate{660000, spread, df};
    p.math_kept = false;
    p.baseline_eval_s = exactly(1);
    p.eval_speed = LogEstimate{1.1, spread, df};
    p.samples_per_evaluation = 60000;
    const TimeToTargetEstimate e = composeTimeToTarget(p);
    const Interval boot = bootstrapSpeedup(p, 0.95, 40000, 3);
    QVERIFY2(std::fabs(std::log(boot.lo / e.speedup.lo)) < 0.01 && std::fabs(std::log(boot.hi / e.speedup.hi)) < 0.01,
             qPrintable(QStringLiteral("delta [%1, %2], bootstrap [%3, %4]")
                            .arg(e.speedup.lo).arg(e.speedup.hi).arg(boot.lo).arg(boot.hi)));
    // Deterministic for a seed.
    QCOMPARE(bootstrapSpeedup(p, 0.95, 2000, 5).lo, bootstrapSpeedup(p, 0.95, 2000, 5).lo);
  }

  // A start-up both arms share (the variant borrowed the baseline's) is one uncertain value: in an
  // A/A it cancels exactly; beside a real throughput change it widens the interval far less than
  // two independent copies did, and the bootstrap agrees.
  void aSharedStartUpIsCountedOnce() {
    TimeToTargetParts p = knownParts();  // a short run: 2 s start-up, 6 s training, one 1-s evaluation
    p.keepMath(exactly(6000));
    p.samples_per_evaluation = 6000;
    p.baseline_startup_s = LogEstimate{2, 0.6, 4};  // the reference runs' start-up, widely spread
    p.throughput = exactly(1);
    p.shareStartup();
    TimeToTargetEstimate e = composeTimeToTarget(p);
    QVERIFY(near(e.speedup.point, 1) && e.log_se < 1e-6);  // the same in both arms: it cancels
    QCOMPARE(e.parts.back().name, std::string("start-up (both)"));
    p.throughput = LogEstimate{1.12, 0.05, 7};
    const TimeToTargetEstimate shared = composeTimeToTarget(p);
    p.ownStartup(p.baseline_startup_s);  // as before: a copy counted as independent
    const TimeToTargetEstimate twice = composeTimeToTarget(p);
    QVERIFY(near(shared.speedup.point, twice.speedup.point));
    QVERIFY2(shared.log_se < 0.6 * twice.log_se, qPrintable(QStringLiteral("%1 vs %2").arg(shared.log_se).arg(twice.log_se)));
    p.shareStartup();
    const Interval boot = bootstrapSpeedup(p, shared.speedup.level, 40000, 3);
    QVERIFY2(std::fabs(std::log(boot.hi / shared.speedup.hi)) < 0.02, qPrintable(QStringLiteral("%1 vs %2").arg(boot.hi).arg(shared.speedup.hi)));
  }

  void oneUncertainPartIsItsOwnTInterval() {
    // One part of 4 df: the delta interval is the t(4) interval, and so are the bootstrap's
    // percentiles (a sum of several parts of few df is where the bootstrap's t tails are wider
    // than Welch-Satterthwaite's, which the A/A simulation holds to its 5 %).
    TimeToTargetParts p = knownParts();
    p.baseline_startup_s = p.variant_startup_s = exactly(0);
    p.baseline_eval_s = exactly(0);
    p.throughput = LogEstimate{1.25, 0.04, 4};
    const TimeToTargetEstimate e = composeTimeToTarget(p);
    QVERIFY(near(e.speedup.lo, 1.25 * std::exp(-tQuantile(0.975, 4) * 0.04), 1e-7));
    const Interval boot = bootstrapSpeedup(p, 0.95, 40000, 4);
    QVERIFY2(std::fabs(std::log(boot.lo / e.speedup.lo)) < 0.01 && std::fabs(std::log(boot.hi / e.speedup.hi)) < 0.01,
             qPrintable(QStringLiteral("delta [%1, %2], bootstrap [%3, %4]")
                            .arg(e.speedup.lo).arg(e.speedup.hi).arg(boot.lo).arg(boot.hi)));
  }

  void samplesCutAtTheCapBoundTheSpeedup() {
    std::vector<TargetRun> var = runsAround(250000);
    var[1] = {300000, false, 1};
    TimeToTargetParts p;
    p.baseline_train_samples_per_s = exactly(1000);
    p.throughput = LogEstimate{1.2, 0.01, 9};
    p.setSamples(compareSamples(runsAround(100000), var));
    QCOMPARE(p.samples_bound, SamplesBound::AtLeast);
    const TimeToTargetEstimate e = composeTimeToTarget(p);
    QCOMPARE(e.bound, SamplesBound::AtMost);  // needs at least so many samples: at most so fast
    QCOMPARE(e.speedup.lo, 0.0);
    QVERIFY(e.speedup.hi < 1);
    QCOMPARE(e.speedup.verdict, Verdict::Slower);
    const QString words = QString::fromStdString(timeToTargetWords(e));
    QVERIFY2(words.startsWith(QStringLiteral("at most 0.")) && words.contains(QStringLiteral(" slower to target: 1.20× throughput, at most 0.")), qPrintable(words));
    QVERIFY2(words.endsWith(QStringLiteral("samples to target (more samples needed)")), qPrintable(words));
    // The variant would be faster if it reached the target: a bound says nothing of "faster".
    p.throughput = LogEstimate{4.0, 0.01, 9};
    QCOMPARE(composeTimeToTarget(p).speedup.verdict, Verdict::NoInterval);
  }

  // A larger global batch taken to need no fewer samples (experiment::samplesNeverFewer): the
  // reference's samples as the least the variant needs (here its start-up and evaluations free). The
  // speedup is then at most the bound, whose words say what was assumed; a throughput fast enough
  // to win even so leaves no verdict (the variant must be run to the target).
  void noFewerSamplesBoundTheSpeedup() {
    TimeToTargetParts p = knownParts();
    p.throughput = LogEstimate{0.85, 0.01, 9};
    p.samples_bound = SamplesBound::AtLeast;
    p.variant_startup_s = exactly(0);
    p.eval_speed = exactly(1e9);
    const TimeToTargetEstimate e = composeTimeToTarget(p);
    QCOMPARE(e.bound, SamplesBound::AtMost);
    // 2 s + 60 s + 2 evaluations of 1 s against 60 000 / 850 = 70.6 s: at most 0.91×.
    QVERIFY2(near(e.speedup.point, 64.0 / (60000.0 / 850.0), 1e-6), qPrintable(QString::number(e.speedup.point)));
    QVERIFY(e.speedup.hi < 1);
    QCOMPARE(e.speedup.verdict, Verdict::Slower);
    const QString words = QString::fromStdString(timeToTargetWords(e));
    QVERIFY2(words.startsWith(QStringLiteral("at most 0.91× slower to target: 0.85× throughput, samples to target at least the baseline's (a bound)")),
             qPrintable(words));
    p.throughput = LogEstimate{0.97, 0.01, 9};  // free start-up and evaluations outweigh 3 % slower steps
    const TimeToTargetEstimate close = composeTimeToTarget(p);
    QVERIFY(close.speedup.hi > 1);
    QCOMPARE(close.speedup.verdict, Verdict::NoInterval);
  }

  void words() {
    TimeToTargetParts p;
    p.baseline_train_samples_per_s = exactly(1000);
    p.throughput = LogEstimate{1.45, 0.01, 9};
    p.baseline_samples = LogEstimate{60000, 0.01, 9};
    p.variant_samples = LogEstimate{60000 / 0.903, 0.01, 9};
    p.math_kept = false;
    p.samples_verdict = SamplesVerdict::More;
    QCOMPARE(timeToTargetWords(composeTimeToTarget(p)),
             std::string("1.31× faster to target: 1.45× throughput, 0.90× samples to target (more samples needed)"));
    p.keepMath(exactly(60000));
    QCOMPARE(timeToTargetWords(composeTimeToTarget(p)),
             std::string("1.45× faster to target: 1.45× throughput, same samples to target (keeps the math)"));
    p.throughput = LogEstimate{1.01, 0.02, 9};
    QCOMPARE(timeToTargetWords(composeTimeToTarget(p)),
             std::string("1.01× to target, within noise: 1.01× throughput, same samples to target (keeps the math)"));
    p.throughput = LogEstimate{0.8, 0.01, 9};
    p.baseline_eval_s = exactly(2);
    p.eval_speed = exactly(1.5);
    p.evaluations = 3;
    const std::string slower = timeToTargetWords(composeTimeToTarget(p));
    QVERIFY2(QString::fromStdString(slower).contains(QStringLiteral(" slower to target: 0.80× throughput")) &&
                 QString::fromStdString(slower).endsWith(QStringLiteral(", 1.50× evaluation")),
             slower.c_str());
    QCOMPARE(timeToTargetWords(TimeToTargetEstimate{}), std::string("–"));
  }

  void aPartWithoutSpreadGivesNoInterval() {
    TimeToTargetParts p = knownParts();
    p.baseline_startup_s = logEstimateOfRuns({2.0});  // one run: its spread unknown
    const TimeToTargetEstimate e = composeTimeToTarget(p);
    QVERIFY(std::isfinite(e.speedup.point));
    QCOMPARE(e.speedup.verdict, Verdict::NoInterval);
    TimeToTargetParts missing;
    QCOMPARE(composeTimeToTarget(missing).speedup.verdict, Verdict::NoInterval);
    QVERIFY(std::isnan(composeTimeToTarget(missing).speedup.point));
  }

  void json() {
    TimeToTargetParts p;
    p.baseline_startup_s = LogEstimate{3, 0.05, 4};
    p.variant_startup_s = LogEstimate{3, 0.05, 4};
    p.baseline_train_samples_per_s = exactly(1000);
    p.throughput = LogEstimate{1.3, 0.03, 9};
    p.setSamples(compareSamples(runsAround(100000), runsAround(110000)));
    const TimeToTargetEstimate e = composeTimeToTarget(p);
    const TimeToTargetEstimate r = timeToTargetFromJson(nlohmann::json::parse(timeToTargetJson(e).dump()));
    QVERIFY(near(r.speedup.point, e.speedup.point));
    QVERIFY(near(r.speedup.lo, e.speedup.lo));
    QVERIFY(near(r.speedup.hi, e.speedup.hi));
    QCOMPARE(r.speedup.verdict, e.speedup.verdict);
    QCOMPARE(r.speedup.method, e.speedup.method);
    QVERIFY(near(r.baseline_s, e.baseline_s) && near(r.variant_s, e.variant_s));
    QVERIFY(near(r.samples_factor, e.samples_factor) && near(r.throughput_factor, e.throughput_factor));
    QVERIFY(near(r.df, e.df) && near(r.log_se, e.log_se));
    QCOMPARE(r.math_kept, false);
    QCOMPARE(r.samples_verdict, e.samples_verdict);
    QCOMPARE(r.parts.size(), e.parts.size());
    QCOMPARE(r.parts[1].name, std::string("samples to target"));
    QVERIFY(near(r.parts[1].hi, e.parts[1].hi));
    QCOMPARE(timeToTargetWords(r), timeToTargetWords(e));
    const LogEstimate exact = logEstimateFromJson(logEstimateJson(exactly(5)));
    QVERIFY(std::isinf(exact.df) && exact.log_se == 0 && exact.value == 5);
    QCOMPARE(timeToTargetFromJson(nlohmann::json::array()).speedup.verdict, Verdict::NoInterval);
  }
};

QTEST_APPLESS_MAIN(TestTimeToTarget)
#include "test_time_to_target.moc"
