// Paired and grouped speedup statistics on synthetic inputs: point estimates, t intervals with
// the host's noise floor, a pair the host speed check flagged set aside, the verdict rule (significance and the
// practical threshold) at its edges, the spending over adaptive looks, the wording.
#include <QtTest/QtTest>

#include <cmath>

#include "wb/stats/stats.h"

using namespace wb::stats;
using Times = std::vector<double>;

Q_DECLARE_METATYPE(Times)
Q_DECLARE_METATYPE(Verdict)

namespace {
bool near(double a, double b, double tol = 1e-9) { return std::fabs(a - b) <= tol; }
}  // namespace

double geomean(const Times& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / double(v.size()));
}
VerdictRule floorOf(double band) {
  VerdictRule r;
  r.floor_band = band;
  return r;
}

class TestStats : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void pairedVerdicts_data() {
    QTest::addColumn<Times>("baseline");
    QTest::addColumn<Times>("variant");
    QTest::addColumn<double>("band");
    QTest::addColumn<Verdict>("verdict");
    // A/A on a bimodal host: each pair mostly shares the host's speed, one pair straddles a flip.
    QTest::newRow("A/A, bimodal host") << Times{10.0, 13.1, 10.2, 12.9, 10.1} << Times{10.1, 12.8, 13.2, 13.0, 10.0}
                                       << 0.14 << Verdict::WithinNoise;
    QTest::newRow("3x faster, 2 pairs") << Times{30.0, 31.0} << Times{10.0, 10.4} << 0.14 << Verdict::Faster;
    QTest::newRow("3x slower, 3 pairs") << Times{10.0, 10.4, 10.1} << Times{30.0, 31.0, 30.5} << 0.14 << Verdict::Slower;
    // The old rule asked the whole interval to clear the ±14 % band: six steady pairs at 1.10×
    // were "within noise". The pairs' own spread says otherwise.
    QTest::newRow("1.10x, six steady pairs, measured band") << Times{11, 11, 11, 11, 11, 11} << Times{10, 10, 10, 10, 10, 10}
                                                            << 0.14 << Verdict::Faster;
    QTest::newRow("1.10x, unknown band, tight pairs") << Times{11, 11.05, 10.95, 11} << Times{10, 10, 10, 10} << 0.0
                                                      << Verdict::Faster;
    QTest::newRow("1.05x, unknown band, 5 pairs ±1 %") << Times{10.5, 10.6, 10.4, 10.5, 10.45} << Times{10, 10, 10, 10, 10}
                                                       << 0.0 << Verdict::Faster;
    QTest::newRow("1.01x, sure but below the threshold") << Times{10.1, 10.1, 10.1, 10.1, 10.1} << Times{10, 10, 10, 10, 10}
                                                         << 0.0 << Verdict::WithinNoise;
    QTest::newRow("1 pair") << Times{30.0} << Times{10.0} << 0.14 << Verdict::NoInterval;
    QTest::newRow("no pair") << Times{} << Times{} << 0.14 << Verdict::NoInterval;
    QTest::newRow("non-finite pairs dropped") << Times{30.0, NAN, 31.0, 0.0} << Times{10.0, 10.0, 10.4, 9.0} << 0.14
                                              << Verdict::Faster;
  }
  void pairedVerdicts() {
    QFETCH(Times, baseline);
    QFETCH(Times, variant);
    QFETCH(double, band);
    QFETCH(Verdict, verdict);
    const SpeedupEstimate e = pairedSpeedup(baseline, variant, floorOf(band));
    QVERIFY2(e.verdict == verdict, qPrintable(QString::fromStdString(formatEstimate(e) + " — " + e.method)));
    if (verdict == Verdict::Faster) QVERIFY(e.lo > 1 && e.point >= 1 + kDefaultMinEffect);
    if (verdict == Verdict::Slower) QVERIFY(e.hi < 1 && e.point <= 1 / (1 + kDefaultMinEffect));
    if (e.hasInterval()) QVERIFY(e.lo <= e.point && e.point <= e.hi);
  }

  void pairedIntervalByHand() {
    // log-ratios ln2 + {−0.1, 0, +0.1}: mean ln2, sd 0.1, t(0.975, 2) = 4.303.
    const Times base{2 * std::exp(-0.1), 2.0, 2 * std::exp(0.1)};
    const SpeedupEstimate e = pairedSpeedup(base, {1, 1, 1});
    QCOMPARE(e.pairs, 3);
    QVERIFY(near(e.point, 2.0));
    const double hw = 4.3027 * 0.1 / std::sqrt(3.0);
    QVERIFY(near(e.lo, 2 * std::exp(-hw), 1e-4));
    QVERIFY(near(e.hi, 2 * std::exp(hw), 1e-4));
    QCOMPARE(e.verdict, Verdict::Faster);
    QCOMPARE(e.level, 0.95);
    QCOMPARE(QString::fromStdString(e.method), QStringLiteral("mean of 3 per-pair log-ratios, 95% t interval"));
  }

  void hostFloorWidensLuckyPairs() {
    // Two pairs that agree to 0.1 %: without a band the interval is tight, with the host's
    // measured band as a floor it is as wide as the machine's noise allows.
    const Times base{12.0, 12.01}, var{10.0, 10.0};
    const SpeedupEstimate tight = pairedSpeedup(base, var);
    const SpeedupEstimate honest = pairedSpeedup(base, var, floorOf(0.14));
    QCOMPARE(tight.verdict, Verdict::Faster);
    QCOMPARE(honest.verdict, Verdict::WithinNoise);
    QVERIFY(honest.hi / honest.lo > 2 * (tight.hi / tight.lo));
    QCOMPARE(honest.noise_band, 0.14);
  }

  void floorFadesWithPairs() {
    // Ten pairs at 1.10× ± 1 % on a host measured at ±14 %: the band floors few pairs, not ten.
    Times base, var;
    for (int i = 0; i < 10; ++i) base.push_back(11.0 * (i % 2 ? 1.01 : 0.99)), var.push_back(10.0);
    const SpeedupEstimate e = pairedSpeedup(base, var, floorOf(0.14));
    QCOMPARE(e.verdict, Verdict::Faster);
    QVERIFY(e.lo > 1.02);
  }

  void aPairTheCheckFlaggedIsSetAside() {
    // Four pairs at 2.0× ± 1 %, one in which the host changed speed (1.3×) and the host speed
    // check saw it: set aside, named, and the look's rule unchanged.
    const Times base{20.2, 19.8, 13, 20.1, 19.9}, var{10, 10, 10, 10, 10};
    const SpeedupEstimate e = pairedSpeedup(base, var, {}, {false, false, true, false, false});
    QCOMPARE(e.set_aside, 1);
    QCOMPARE(e.pairs, 5);
    QVERIFY(near(e.point, 2.0, 0.01));
    QCOMPARE(e.verdict, Verdict::Faster);
    QVERIFY(e.lo > 1.9);
    QVERIFY2(e.method.find("mean of 4 per-pair") != std::string::npos, e.method.c_str());
    QVERIFY2(e.method.find("pair 3 set aside (the host speed check") != std::string::npos, e.method.c_str());
    // The same pairs with no check: nothing is set aside by the values alone; the flip widens
    // the interval and pulls the estimate, and the verdict still stands.
    const SpeedupEstimate unseen = pairedSpeedup(base, var);
    QCOMPARE(unseen.set_aside, 0);
    QVERIFY(unseen.point < 1.9 && unseen.lo < 1.9);
    QCOMPARE(unseen.verdict, Verdict::Faster);
    // Four pairs whose spread is small by chance and one off by 25 %: A/A noise as often as a
    // flip. Setting the odd one aside would call a 1.11× speedup "faster" on four lucky pairs
    // (Gaussian A/A pairs: 6 % of experiments called at a 5 % rate); kept, it is within noise.
    const SpeedupEstimate lucky = pairedSpeedup({11.05, 11.06, 11.04, 11.055, 8.6}, {10, 10, 10, 10, 10});
    QCOMPARE(lucky.set_aside, 0);
    QCOMPARE(lucky.verdict, Verdict::WithinNoise);
    // Pairs set aside leaving fewer than 2: no interval, and it says why.
    const SpeedupEstimate few = pairedSpeedup({20, 13, 20}, {10, 10, 10}, {}, {true, false, true});
    QCOMPARE(few.verdict, Verdict::NoInterval);
    QCOMPARE(few.set_aside, 2);
    QVERIFY2(few.method.find("pairs 1 and 3 set aside") != std::string::npos, few.method.c_str());
  }

  void hostCheckFlagsAPair() {
    // Kernel timings (ms) of both runs, before and after: a 50 % flip between the runs is seen, a
    // quiet host's 2 % is not; a run without a check adds nothing.
    QVERIFY(hostChangedOverPair({2.57, 2.58, 3.90, 3.88}, 0.10));
    QVERIFY(hostChangedOverPair({2.57, 3.90, 2.56, 2.58}, 0.10));
    QVERIFY(!hostChangedOverPair({2.57, 2.60, 2.55, 2.61}, 0.10));
    QVERIFY(!hostChangedOverPair({2.57, 0, 0, 2.60}, 0.10));
    QVERIFY(!hostChangedOverPair({}, 0.10));
    QVERIFY(hostChangedOverPair({2.57, 2.60, 2.55, 2.66}, 0.03));
  }

  void groups_data() {
    QTest::addColumn<Times>("baseline");
    QTest::addColumn<Times>("variant");
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("1 run each") << Times{20.0} << Times{10.0} << Verdict::NoInterval;
    QTest::newRow("A/A repeats") << Times{10.0, 12.5, 10.3} << Times{12.4, 10.1, 10.2} << Verdict::WithinNoise;
    QTest::newRow("3x, 3 vs 2") << Times{30.0, 31.0, 30.2} << Times{10.0, 10.2} << Verdict::Faster;
    QTest::newRow("3x slower, 1 vs 3") << Times{10.0} << Times{30.0, 31.0, 30.2} << Verdict::Slower;
  }
  void groups() {
    QFETCH(Times, baseline);
    QFETCH(Times, variant);
    QFETCH(Verdict, verdict);
    const SpeedupEstimate e = groupSpeedup(baseline, variant, floorOf(0.14));
    QVERIFY2(e.verdict == verdict, qPrintable(QString::fromStdString(formatEstimate(e) + " — " + e.method)));
    QVERIFY(near(e.point, geomean(baseline) / geomean(variant), 1e-9));  // the ratio of geometric means
    QCOMPARE(e.baseline_runs, int(baseline.size()));
    QCOMPARE(e.variant_runs, int(variant.size()));
  }

  void rateSpeedupIsVariantOverBaseline() {
    const SpeedupEstimate e = groupRateSpeedup({1000, 1010}, {3000, 3030}, floorOf(0.1));
    QVERIFY(near(e.point, 3.0, 1e-9));
    QCOMPARE(e.verdict, Verdict::Faster);
  }

  void verdictEdges_data() {
    QTest::addColumn<double>("point");
    QTest::addColumn<double>("lo");
    QTest::addColumn<double>("hi");
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("significant and beyond the threshold") << 1.10 << 1.05 << 1.15 << Verdict::Faster;
    QTest::newRow("significant, below the threshold") << 1.01 << 1.005 << 1.015 << Verdict::WithinNoise;
    QTest::newRow("at the threshold") << 1.02 << 1.001 << 1.04 << Verdict::Faster;
    QTest::newRow("large but not significant") << 1.20 << 0.90 << 1.50 << Verdict::WithinNoise;
    QTest::newRow("interval touching 1") << 1.10 << 1.0 << 1.2 << Verdict::WithinNoise;
    QTest::newRow("slower") << 0.7 << 0.5 << 0.9 << Verdict::Slower;
    QTest::newRow("slower, below the threshold") << 0.99 << 0.985 << 0.995 << Verdict::WithinNoise;
    QTest::newRow("no interval") << 1.5 << double(NAN) << double(NAN) << Verdict::NoInterval;
  }
  void verdictEdges() {
    QFETCH(double, point);
    QFETCH(double, lo);
    QFETCH(double, hi);
    QFETCH(Verdict, verdict);
    QCOMPARE(verdictOf(point, lo, hi, 0.02), verdict);
  }

  void clearVerdicts() {
    SpeedupEstimate e;
    e.min_effect = 0.02;
    e.point = 1.0, e.lo = 0.99, e.hi = 1.01, e.verdict = Verdict::WithinNoise;
    QVERIFY(verdictIsClear(e));   // no effect that counts: more pairs would not change it
    e.lo = 0.8, e.hi = 1.3;
    QVERIFY(!verdictIsClear(e));  // could still be an effect: add pairs
    e.lo = 1.2, e.hi = 1.5, e.verdict = Verdict::Faster;
    QVERIFY(verdictIsClear(e));
    e.verdict = Verdict::NoInterval;
    QVERIFY(!verdictIsClear(e));
    // A 3x effect is clear after 2 pairs; an A/A pair set is not clear after 2.
    QVERIFY(verdictIsClear(pairedSpeedup({30, 31}, {10, 10.3}, floorOf(0.14))));
    QVERIFY(!verdictIsClear(pairedSpeedup({10, 13}, {13, 10}, floorOf(0.14))));
  }

  // The looks of an adaptive experiment spend 4.5 % in all, so an A/A ends faster or slower at
  // most 4.5 % of the time however early it stops (the union bound), under the 5 % promised; the
  // last look gets the most.
  void spendingAddsUpToTheRate() {
    for (int most : {2, 3, 5, 10, 20}) {
      double sum = 0, previous = 0;
      for (int n = 1; n <= most; ++n) {
        const double a = lookAlpha(n, most);
        QVERIFY(a >= 0);
        if (n > 2) QVERIFY2(a >= previous, qPrintable(QStringLiteral("look %1 of %2").arg(n).arg(most)));
        previous = a, sum += a;
      }
      QVERIFY2(near(sum, kSpentAlarmRate, 1e-12), qPrintable(QString::number(most)));
      QCOMPARE(spentAlpha(most, most), kSpentAlarmRate);
    }
    QVERIFY(kSpentAlarmRate < kFalseAlarmRate);
    Sequential adaptive;
    adaptive.max_pairs = 5;
    QVERIFY(near(adaptive.at(5).alpha, 0.045 * (1 - 0.421875), 1e-12));
    QVERIFY(adaptive.at(3).alpha < adaptive.at(5).alpha);
    Sequential fixed;
    fixed.fixed_pairs = 3;
    QCOMPARE(fixed.at(3).alpha, kSpentAlarmRate);
    // A look at a smaller α shows a wider interval, and says its level.
    const Times base{10.9, 11.1, 11.0, 10.95}, var{10, 10, 10, 10};
    const SpeedupEstimate early = pairedSpeedup(base, var, adaptive.at(4));
    const SpeedupEstimate once = pairedSpeedup(base, var, fixed.at(4));
    QVERIFY(early.hi / early.lo > once.hi / once.lo);
    QVERIFY(early.level > 0.95);
  }

  void wording() {
    QCOMPARE(QString::fromStdString(verdictWord(Verdict::Faster)), QStringLiteral("faster"));
    QCOMPARE(QString::fromStdString(verdictWord(Verdict::Slower)), QStringLiteral("slower"));
    QCOMPARE(QString::fromStdString(verdictWord(Verdict::WithinNoise)), QStringLiteral("within noise"));
    QCOMPARE(QString::fromStdString(verdictWord(Verdict::NoInterval)), QStringLiteral("1 run each: no interval"));
    SpeedupEstimate e;
    QCOMPARE(QString::fromStdString(formatEstimate(e)), QStringLiteral("–"));
    e = groupSpeedup({12.6}, {10.0});
    QCOMPARE(QString::fromStdString(formatEstimate(e)), QStringLiteral("1.26× (1 run each: no interval)"));
    QVERIFY(!emphasise(e));
    // A bound (a composed time to target whose variant runs never reached the target): no "1 run each".
    e.point = 1.09, e.lo = 0, e.hi = 1.29, e.verdict = Verdict::NoInterval;
    QCOMPARE(QString::fromStdString(formatEstimate(e)), QStringLiteral("at most 1.09× [≤ 1.29] (a bound: no verdict)"));
    // Two runs cut at different caps leave one degree of freedom: an edge of 1e30 reads as unbounded,
    // one past 100 without decimals, not as thirty digits.
    e.point = 0.94, e.hi = 5.7e27;
    QCOMPARE(QString::fromStdString(formatEstimate(e)), QStringLiteral("at most 0.94× [≤ ∞] (a bound: no verdict)"));
    e.hi = 140.26;
    QCOMPARE(QString::fromStdString(formatEstimate(e)), QStringLiteral("at most 0.94× [≤ 140] (a bound: no verdict)"));
    e.point = 1.31, e.lo = 1.12, e.hi = 1.52, e.verdict = Verdict::Faster;
    QCOMPARE(QString::fromStdString(formatEstimate(e)), QStringLiteral("1.31× [1.12, 1.52] faster"));
    QVERIFY(emphasise(e));
    e.point = 1.02, e.lo = 0.91, e.hi = 1.14, e.verdict = Verdict::WithinNoise;
    QCOMPARE(QString::fromStdString(formatEstimate(e)), QStringLiteral("1.02× [0.91, 1.14] within noise"));
    QVERIFY(!emphasise(e));
    // An interval that could not tell a 2× change from none is no measurement (a ladder printed the
    // multi-tensor step as 1.01× [0.03, 30.13]): it reads "not measured" with why and draws no bar;
    // a verdict whose interval excludes 1 stays one however wide.
    e.point = 1.01, e.lo = 0.03, e.hi = 30.13, e.verdict = Verdict::WithinNoise, e.level = 0.999;
    const std::string wide = formatEstimate(e);
    QVERIFY2(wide.rfind("not measured: ", 0) == 0 && wide.find("too wide to tell a 2× change from none") != std::string::npos &&
                 wide.find("[0.03") == std::string::npos,
             wide.c_str());
    QVERIFY(!drawsInterval(e));
    e.lo = 0.6, e.hi = 1.7;  // within ×/÷ 2 of its centre: a measurement
    QVERIFY(notMeasuredWhy(e).empty() && drawsInterval(e));
    e.point = 4, e.lo = 1.5, e.hi = 20, e.verdict = Verdict::Faster;
    QVERIFY(notMeasuredWhy(e).empty());
    Sequential s;
    QVERIFY(describeRule(s).find("±2.0 %") != std::string::npos);
    QVERIFY(describeRule(s).find("not measured") != std::string::npos);
    QVERIFY2(describeRule(s).find("its share of 4.5 % (false alarms ≤ 5 %)") != std::string::npos, describeRule(s).c_str());
  }

  void noiseBand() {
    QVERIFY(near(bandOfLogSigma(runLogSigma(0.14)), 0.14, 1e-12));
    QCOMPARE(runLogSigma(0.0), 0.0);
    QCOMPARE(runLogSigma(double(NAN)), 0.0);
    QVERIFY(std::isnan(bandOfRepeats({10.0})));
    QVERIFY(near(bandOfRepeats({10.0, 10.0, 10.0}), 0.0));
    // Repeats at e^{±0.05}: sd of logs 0.05·√(2/1) → band e^(1.96·0.0707) − 1.
    QVERIFY(near(bandOfRepeats({10 * std::exp(-0.05), 10 * std::exp(0.05)}), std::expm1(1.959964 * 0.05 * std::sqrt(2.0)), 1e-9));
    QVERIFY(near(bandOfPairs({10, 11}, {10, 10}), std::expm1(1.959964 * (std::log(1.1) / std::sqrt(2.0)) / std::sqrt(2.0)), 1e-9));
    // More pairs detect smaller effects, never below the practical threshold.
    QVERIFY(std::isnan(smallestDetectable(1, 0.14)));
    double previous = smallestDetectable(2, 0.14);
    QVERIFY(previous > 1.3);
    for (int n : {3, 5, 10, 50}) {
      const double d = smallestDetectable(n, 0.14);
      QVERIFY2(d < previous, qPrintable(QString::number(n)));
      QVERIFY(d >= 1 + kDefaultMinEffect);
      previous = d;
    }
    QCOMPARE(smallestDetectable(50, 0.01), 1 + kDefaultMinEffect);  // the threshold binds
    QVERIFY(std::isnan(smallestDetectable(3, 0.0)));
  }

  void roundsNoiseIsTheTwoWayResidual() {
    const RoundsNoise none = roundsNoise({{100, 50, 200}, {300, 150, 600}});
    QCOMPARE(none.df, 2);
    QVERIFY(none.sigma < 1e-12);
    QVERIFY(!(roundsNoise({{100, 110}}).df));           // one candidate: nothing to pool
    QVERIFY(!(roundsNoise({{100}, {120}}).df));          // one round
    QVERIFY(!(roundsNoise({{100, 0}, {120, 130}}).df));  // a rate that is not a rate
    // Residuals ±e in a 2 x 2 layout: each is ±ln(1.1)/2, σ = ln(1.1) / 2 · 2 = ln(1.1).
    const RoundsNoise two = roundsNoise({{110, 100}, {100, 110}});
    QCOMPARE(two.df, 1);
    QVERIFY(std::abs(two.sigma - std::log(1.1)) < 1e-9);
    QVERIFY(std::abs(two.band() - bandOfLogSigma(two.sigma)) < 1e-12);
    // The interval uses the pooled noise: a quiet pair of counts inside a noisy probe is as wide
    // as the probe's noise says.
    const RoundsNoise n{0.05, 6};
    VerdictRule rule;
    rule.min_effect = 0.1;
    const SpeedupEstimate e = roundsRateSpeedup({100, 100, 100, 100}, {150, 150, 150, 150}, n, rule);
    QVERIFY(e.hasInterval());
    QVERIFY(std::abs(e.point - 1.5) < 1e-9);
    const double half = tQuantile(0.975, 6) * std::sqrt(2.0) * 0.05 / 2.0;
    QVERIFY(std::abs(std::log(e.hi / e.point) - half) < 1e-9);
    QCOMPARE(e.verdict, Verdict::Faster);
    QVERIFY(!roundsRateSpeedup({100}, {150}, n, rule).hasInterval());
    QVERIFY(!roundsRateSpeedup({100, 100}, {150, 150}, RoundsNoise{}, rule).hasInterval());
  }

  void tQuantiles() {
    QCOMPARE(tQuantile975(1), 12.706);
    QCOMPARE(tQuantile975(4), 2.776);
    QCOMPARE(tQuantile975(30), 2.042);
    QVERIFY(near(tQuantile975(1000), 1.959964));
    QVERIFY(std::isnan(tQuantile975(0)));
    // Any level: agrees with the table, and grows as α shrinks.
    for (int df : {1, 2, 4, 9, 30}) QVERIFY2(near(tQuantile(0.975, df), tQuantile975(df), 5e-4), qPrintable(QString::number(df)));
    QVERIFY(near(tQuantile(0.995, 4), 4.604, 1e-3));
    QVERIFY(tQuantile(0.999, 4) > tQuantile(0.995, 4));
    QVERIFY(std::isnan(tQuantile(0.4, 4)));
  }
};

QTEST_APPLESS_MAIN(TestStats)
#include "test_stats.moc"
