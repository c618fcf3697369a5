// Samples to target compared against reference runs: the ratio of geometric means and its Welch
// t interval on known runs, more and fewer samples, an A/A comparison within noise, one run
// against the reference's spread, runs cut at the cap (a bound, and only the conclusion the bound
// allows), runs that all stop at one evaluation, the reference runs a 5 % change needs, the words
// and the JSON an experiment stores.
#include <QtTest/QtTest>

#include <cmath>

#include "wb/stats/convergence.h"
#include "wb/stats/time_to_target_json.h"

using namespace wb::stats;
using Runs = std::vector<TargetRun>;

namespace {
bool near(double a, double b, double tol = 1e-9) { return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b)); }

// Seeds' samples to target scattered around `centre` (a fixed pattern, so the spread is known).
Runs runsAround(double centre, int n = 5) {
  static const double pattern[] = {1.00, 1.10, 0.90, 1.05, 0.95, 1.02, 0.98, 1.07, 0.93, 1.01};
  Runs runs;
  for (int i = 0; i < n; ++i) runs.push_back({centre * pattern[i], true, uint64_t(i)});
  return runs;
}

double sdOfLogs(const Runs& runs) {
  double mean = 0;
  for (const auto& r : runs) mean += std::log(r.samples) / double(runs.size());
  double ss = 0;
  for (const auto& r : runs) ss += std::pow(std::log(r.samples) - mean, 2);
  return std::sqrt(ss / double(runs.size() - 1));
}
}  // namespace

class TestConvergence : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void ratioAndIntervalOfKnownRuns() {
    const Runs ref = runsAround(100000), var = runsAround(120000);
    const SamplesComparison c = compareSamples(ref, var);
    QVERIFY(near(c.ratio, 1.2));
    // Equal spreads and runs: Welch's df is 2(n − 1) = 8 and se = s·√(2/5).
    const double s = sdOfLogs(ref);
    QVERIFY(near(c.log_se, s * std::sqrt(2.0 / 5)));
    QVERIFY(near(c.df, 8));
    const double t = tQuantile(0.975, 8);
    QVERIFY(near(t, 2.306, 1e-3));
    QVERIFY(near(c.lo, 1.2 * std::exp(-t * c.log_se)));
    QVERIFY(near(c.hi, 1.2 * std::exp(t * c.log_se)));
    QCOMPARE(c.verdict, SamplesVerdict::More);
    QCOMPARE(c.bound, SamplesBound::Exact);
    QCOMPARE(c.reference.runs, 5);
    QVERIFY(near(c.reference.log_sd, s));
  }

  void fewerSamplesAndWithinNoise() {
    QCOMPARE(compareSamples(runsAround(100000), runsAround(80000)).verdict, SamplesVerdict::Fewer);
    const SamplesComparison same = compareSamples(runsAround(100000, 5), runsAround(100000, 10));
    QCOMPARE(same.verdict, SamplesVerdict::WithinNoise);
    QVERIFY(same.lo < 1 && same.hi > 1);
    // Significant but below the practical threshold: 1 % more with a tiny spread.
    Runs tight, tighter;
    for (int i = 0; i < 6; ++i) tight.push_back({100000.0 + i, true, 0}), tighter.push_back({101000.0 + i, true, 0});
    const SamplesComparison small = compareSamples(tight, tighter);
    QVERIFY(small.lo > 1);
    QCOMPARE(small.verdict, SamplesVerdict::WithinNoise);
  }

  void oneRunAgainstTheReferencePoints() {
    const Runs ref = runsAround(100000, 6);
    const SamplesComparison c = compareSamples(ref, Runs{{150000, true, 9}});
    const double s = sdOfLogs(ref);
    QVERIFY(near(c.log_se, s * std::sqrt(1.0 / 6 + 1.0)));  // the run borrows the reference's spread
    QVERIFY(near(c.df, 5));
    QCOMPARE(c.verdict, SamplesVerdict::More);
    const SamplesComparison none = compareSamples(Runs{{100000, true, 1}}, Runs{{150000, true, 2}});
    QVERIFY(!none.hasInterval());
    QCOMPARE(none.verdict, SamplesVerdict::NoInterval);
    QVERIFY(near(none.ratio, 1.5));
    QCOMPARE(compareSamples({}, ref).verdict, SamplesVerdict::NoInterval);
  }

  void variantCutAtTheCapIsALowerBound() {
    const Runs ref = runsAround(100000);
    Runs var = runsAround(250000);
    var[1] = {300000, false, 1};  // stopped at the cap (3× the baseline's samples) before the target
    var[3] = {300000, false, 3};
    const SamplesComparison c = compareSamples(ref, var);
    QCOMPARE(c.bound, SamplesBound::AtLeast);
    QCOMPARE(c.variant.censored, 2);
    QVERIFY(std::isinf(c.hi));
    QVERIFY(c.lo > 2);
    QCOMPARE(c.verdict, SamplesVerdict::More);
    QVERIFY(QString::fromStdString(formatSamples(c)).startsWith(QStringLiteral("at least ")));
    QVERIFY(QString::fromStdString(formatSamples(c)).contains(QStringLiteral("2 of 10 runs stopped at the cap")));
  }

  void aBoundAllowsOnlyItsOwnConclusion() {
    // The variant's runs that reached say "fewer", but one was cut: fewer cannot be concluded.
    Runs var = runsAround(60000);
    var[0] = {61000, false, 0};
    const SamplesComparison cut = compareSamples(runsAround(100000), var);
    QCOMPARE(cut.bound, SamplesBound::AtLeast);
    QCOMPARE(cut.verdict, SamplesVerdict::NoInterval);
    // A reference run cut: an upper bound, and fewer still stands.
    Runs ref = runsAround(100000);
    ref[2] = {300000, false, 2};  // stopped at the cap
    const SamplesComparison refCut = compareSamples(ref, runsAround(60000));
    QCOMPARE(refCut.bound, SamplesBound::AtMost);
    QCOMPARE(refCut.lo, 0.0);
    QCOMPARE(refCut.verdict, SamplesVerdict::Fewer);
    var[0].reached = false;
    QCOMPARE(compareSamples(ref, var).bound, SamplesBound::Unknown);
    QCOMPARE(compareSamples(ref, var).verdict, SamplesVerdict::NoInterval);
  }

  void runsThatStopAtOneEvaluationAreNotExact() {
    Runs ref, var;
    for (int i = 0; i < 5; ++i) ref.push_back({180000, true, uint64_t(i)}), var.push_back({180000, true, uint64_t(i)});
    SamplesRule rule;
    rule.resolution = 60000;  // an evaluation every epoch of 60 000 samples
    const SamplesComparison c = compareSamples(ref, var, rule);
    QVERIFY(near(c.reference.log_sd, 60000.0 / 180000 / std::sqrt(12.0)));
    QVERIFY(c.lo < 1 && c.hi > 1);
    QCOMPARE(c.verdict, SamplesVerdict::WithinNoise);
    var.back().samples = 240000;  // one run a whole evaluation later: still not "more"
    QCOMPARE(compareSamples(ref, var, rule).verdict, SamplesVerdict::WithinNoise);
  }

  void referenceRunsForAFivePercentChange() {
    // At a 5 % seed spread: ln 1.05 = 0.0488 ≥ (t(.975, 34) + t(.8, 34)) · 0.05 · √(2/18) = 0.0481,
    // and at 17 runs (df 32) the right side is 0.0496: 18 runs.
    QCOMPARE(runsToDetect(0.05), 18);
    QCOMPARE(runsToDetect(0.005), 2);
    QVERIFY(runsToDetect(0.02) < runsToDetect(0.05));
    QVERIFY(runsToDetect(0.10) > runsToDetect(0.05));
    QVERIFY(runsToDetect(0.10, 0.10) < runsToDetect(0.10, 0.05));
    // One variant run: its own seed noise never averages out.
    QCOMPARE(runsToDetect(0.05, 0.05, 0.8, 1), 0);
    QVERIFY(runsToDetect(0.01, 0.05, 0.8, 1) > 0);
    QCOMPARE(runsToDetect(std::nan("")), 0);
  }

  void seedSpreadOfReachedRuns() {
    Runs runs = runsAround(100000);
    QVERIFY(near(seedSpread(runs), sdOfLogs(runs)));
    runs.push_back({300000, false, 7});  // a cut run says nothing of the spread
    QVERIFY(near(seedSpread(runs), sdOfLogs(runsAround(100000))));
    QVERIFY(std::isnan(seedSpread(Runs{{1, true, 0}})));
  }

  void words() {
    const std::string more = formatSamples(compareSamples(runsAround(100000), runsAround(120000)));
    QVERIFY2(QString::fromStdString(more).startsWith(QStringLiteral("1.20× the samples [")), more.c_str());
    QVERIFY2(QString::fromStdString(more).endsWith(QStringLiteral("]: more samples needed")), more.c_str());
    QCOMPARE(samplesVerdictWord(SamplesVerdict::Fewer), std::string("fewer samples needed"));
    QCOMPARE(formatSamples(SamplesComparison{}), std::string("–"));
  }

  void jsonOfRunsAndComparisons() {
    Runs runs = runsAround(100000);
    runs[4].reached = false;
    auto back = targetRunsFromJson(targetRunsJson(runs));
    QVERIFY(back.ok());
    QCOMPARE(back->size(), runs.size());
    QCOMPARE((*back)[4].reached, false);
    QCOMPARE((*back)[2].seed, uint64_t(2));
    QVERIFY(near((*back)[1].samples, runs[1].samples));
    nlohmann::json bad = targetRunsJson(runs);
    bad[3].erase("samples");
    auto refused = targetRunsFromJson(bad);
    QVERIFY(!refused.ok());
    QVERIFY(QString::fromStdString(refused.error().message).contains(QStringLiteral("runs[3].samples")));

    Runs var = runsAround(250000);
    var[0].reached = false;
    const SamplesComparison c = compareSamples(runsAround(100000), var);
    const SamplesComparison r = samplesComparisonFromJson(nlohmann::json::parse(samplesComparisonJson(c).dump()));
    QVERIFY(near(r.ratio, c.ratio));
    QVERIFY(near(r.lo, c.lo));
    QVERIFY(std::isinf(r.hi));  // the open end of a bound survives null
    QCOMPARE(r.verdict, c.verdict);
    QCOMPARE(r.bound, SamplesBound::AtLeast);
    QCOMPARE(r.variant.censored, 1);
    QVERIFY(near(r.reference.samples.log_se, c.reference.samples.log_se));
    QVERIFY(near(r.df, c.df));
    QCOMPARE(r.method, c.method);
    QCOMPARE(samplesComparisonFromJson(nlohmann::json("not an object")).verdict, SamplesVerdict::NoInterval);
  }
};

QTEST_APPLESS_MAIN(TestConvergence)
#include "test_convergence.moc"
