// Paired and grouped speedup statistics on synthetic inputs: point estimates, t intervals with
// the host's noise floor, the verdict rule at its edges, adaptive stopping, the wording.
#include <QtTest/QtTest>

#include <cmath>

#include "wb/report/stats.h"

using namespace wb::report;
using Times = std::vector<double>;

Q_DECLARE_METATYPE(Times)
Q_DECLARE_METATYPE(Verdict)

namespace {
bool near(double a, double b, double tol = 1e-9) { return std::fabs(a - b) <= tol; }
}  // namespace

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
    QTest::newRow("1.10x, below the band") << Times{11, 11, 11, 11, 11, 11} << Times{10, 10, 10, 10, 10, 10} << 0.14
                                           << Verdict::WithinNoise;
    QTest::newRow("1.10x, unknown band, tight pairs") << Times{11, 11.05, 10.95, 11} << Times{10, 10, 10, 10} << 0.0
                                                      << Verdict::Faster;
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
    const SpeedupEstimate e = pairedSpeedup(baseline, variant, band);
    QVERIFY2(e.verdict == verdict, qPrintable(QString::fromStdString(formatEstimate(e) + " — " + e.method)));
    if (verdict == Verdict::Faster) QVERIFY(e.lo > 1 + band);
    if (verdict == Verdict::Slower) QVERIFY(e.hi < 1 / (1 + band));
    if (e.hasInterval()) QVERIFY(e.lo <= e.point && e.point <= e.hi);
  }

  void pairedIntervalByHand() {
    // log-ratios ln2 + {−0.1, 0, +0.1}: median ln2, sd 0.1, t(0.975, 2) = 4.303.
    const Times base{2 * std::exp(-0.1), 2.0, 2 * std::exp(0.1)};
    const SpeedupEstimate e = pairedSpeedup(base, {1, 1, 1}, 0.0);
    QCOMPARE(e.pairs, 3);
    QVERIFY(near(e.point, 2.0));
    const double hw = 4.303 * 0.1 / std::sqrt(3.0);
    QVERIFY(near(e.lo, 2 * std::exp(-hw), 1e-9));
    QVERIFY(near(e.hi, 2 * std::exp(hw), 1e-9));
    QCOMPARE(e.verdict, Verdict::Faster);
    QCOMPARE(QString::fromStdString(e.method), QStringLiteral("median of 3 per-pair log-ratios, 95% t interval"));
  }

  void hostFloorWidensLuckyPairs() {
    // Two pairs that agree to 0.1 %: without a band the interval is tight, with the host's band
    // it is as wide as the machine's noise allows.
    const Times base{12.0, 12.01}, var{10.0, 10.0};
    const SpeedupEstimate tight = pairedSpeedup(base, var, 0.0);
    const SpeedupEstimate honest = pairedSpeedup(base, var, 0.14);
    QCOMPARE(tight.verdict, Verdict::Faster);
    QCOMPARE(honest.verdict, Verdict::WithinNoise);
    QVERIFY(honest.hi / honest.lo > 2 * (tight.hi / tight.lo));
  }

  void medianResistsOneFlippedPair() {
    // Four pairs at 2.0×, one in which the host changed speed (ratio 1.3×): the point stays 2.0×.
    const SpeedupEstimate e = pairedSpeedup({20, 20, 13, 20, 20}, {10, 10, 10, 10, 10}, 0.14);
    QVERIFY(near(e.point, 2.0));
  }

  void groups_data() {
    QTest::addColumn<Times>("baseline");
    QTest::addColumn<Times>("variant");
    QTest::addColumn<Verdict>("verdict");
    QTest::addColumn<double>("point");
    QTest::newRow("1 run each") << Times{20.0} << Times{10.0} << Verdict::NoInterval << 2.0;
    QTest::newRow("A/A repeats") << Times{10.0, 12.5, 10.3} << Times{12.4, 10.1, 10.2} << Verdict::WithinNoise << 10.3 / 10.2;
    QTest::newRow("3x, 3 vs 2") << Times{30.0, 31.0, 30.2} << Times{10.0, 10.2} << Verdict::Faster << 30.2 / std::sqrt(10.0 * 10.2);
    QTest::newRow("3x slower, 1 vs 3") << Times{10.0} << Times{30.0, 31.0, 30.2} << Verdict::Slower << 10.0 / 30.2;
  }
  void groups() {
    QFETCH(Times, baseline);
    QFETCH(Times, variant);
    QFETCH(Verdict, verdict);
    QFETCH(double, point);
    const SpeedupEstimate e = groupSpeedup(baseline, variant, 0.14);
    QVERIFY2(e.verdict == verdict, qPrintable(QString::fromStdString(formatEstimate(e) + " — " + e.method)));
    QVERIFY(near(e.point, point, 1e-9));
    QCOMPARE(e.baseline_runs, int(baseline.size()));
    QCOMPARE(e.variant_runs, int(variant.size()));
  }

  void rateSpeedupIsVariantOverBaseline() {
    const SpeedupEstimate e = groupRateSpeedup({1000, 1010}, {3000, 3030}, 0.1);
    QVERIFY(near(e.point, 3.0, 1e-9));
    QCOMPARE(e.verdict, Verdict::Faster);
  }

  void verdictEdges_data() {
    QTest::addColumn<double>("lo");
    QTest::addColumn<double>("hi");
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("above the band") << 1.15 << 1.5 << Verdict::Faster;
    QTest::newRow("above 1, inside the band") << 1.05 << 1.5 << Verdict::WithinNoise;
    QTest::newRow("at the edge") << 1.10 << 1.5 << Verdict::WithinNoise;
    QTest::newRow("below the band") << 0.5 << 0.9 << Verdict::Slower;
    QTest::newRow("straddles 1") << 0.8 << 1.3 << Verdict::WithinNoise;
    QTest::newRow("no interval") << double(NAN) << double(NAN) << Verdict::NoInterval;
  }
  void verdictEdges() {
    QFETCH(double, lo);
    QFETCH(double, hi);
    QFETCH(Verdict, verdict);
    QCOMPARE(verdictOf(lo, hi, 0.10), verdict);
  }

  void clearVerdicts() {
    SpeedupEstimate e;
    e.noise_band = 0.1;
    e.point = 1.0, e.lo = 0.95, e.hi = 1.05, e.verdict = Verdict::WithinNoise;
    QVERIFY(verdictIsClear(e));   // no effect beyond the noise: more pairs would not change it
    e.lo = 0.8, e.hi = 1.3;
    QVERIFY(!verdictIsClear(e));  // could still be an effect: add pairs
    e.lo = 1.2, e.hi = 1.5, e.verdict = Verdict::Faster;
    QVERIFY(verdictIsClear(e));
    e.verdict = Verdict::NoInterval;
    QVERIFY(!verdictIsClear(e));
    // A 3x effect is clear after 2 pairs; an A/A pair set is not clear after 2.
    QVERIFY(verdictIsClear(pairedSpeedup({30, 31}, {10, 10.3}, 0.14)));
    QVERIFY(!verdictIsClear(pairedSpeedup({10, 13}, {13, 10}, 0.14)));
  }

  void wording() {
    QCOMPARE(QString::fromStdString(verdictWord(Verdict::Faster)), QStringLiteral("faster"));
    QCOMPARE(QString::fromStdString(verdictWord(Verdict::Slower)), QStringLiteral("slower"));
    QCOMPARE(QString::fromStdString(verdictWord(Verdict::WithinNoise)), QStringLiteral("within noise"));
    QCOMPARE(QString::fromStdString(verdictWord(Verdict::NoInterval)), QStringLiteral("1 run each: no interval"));
    SpeedupEstimate e;
    QCOMPARE(QString::fromStdString(formatEstimate(e)), QStringLiteral("–"));
    e = groupSpeedup({12.6}, {10.0}, 0.14);
    QCOMPARE(QString::fromStdString(formatEstimate(e)), QStringLiteral("1.26× (1 run each: no interval)"));
    QVERIFY(!emphasise(e));
    e.point = 1.31, e.lo = 1.12, e.hi = 1.52, e.verdict = Verdict::Faster;
    QCOMPARE(QString::fromStdString(formatEstimate(e)), QStringLiteral("1.31× [1.12, 1.52] faster"));
    QVERIFY(emphasise(e));
    e.point = 1.02, e.lo = 0.91, e.hi = 1.14, e.verdict = Verdict::WithinNoise;
    QCOMPARE(QString::fromStdString(formatEstimate(e)), QStringLiteral("1.02× [0.91, 1.14] within noise"));
    QVERIFY(!emphasise(e));
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
    // More pairs detect smaller effects, never below the band itself.
    double previous = smallestDetectable(1, 0.14);
    QVERIFY(previous > 1.3);
    for (int n : {2, 3, 5, 10, 50}) {
      const double d = smallestDetectable(n, 0.14);
      QVERIFY2(d < previous || n == 2, qPrintable(QString::number(n)));
      QVERIFY(d > 1.14);
      previous = d;
    }
    QVERIFY(std::isnan(smallestDetectable(3, 0.0)));
  }

  // Candidates in interleaved rounds: a factor shared by a whole round is not noise; what the
  // candidates disagree on from round to round is, pooled with (C − 1)(R − 1) degrees of freedom.
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
    const SpeedupEstimate e = roundsRateSpeedup({100, 100, 100, 100}, {150, 150, 150, 150}, n, 0.1);
    QVERIFY(e.hasInterval());
    QVERIFY(std::abs(e.point - 1.5) < 1e-9);
    const double half = tQuantile975(6) * std::sqrt(2.0) * 0.05 / 2.0;
    QVERIFY(std::abs(std::log(e.hi / e.point) - half) < 1e-9);
    QCOMPARE(e.verdict, Verdict::Faster);
    QVERIFY(!roundsRateSpeedup({100}, {150}, n, 0.1).hasInterval());
    QVERIFY(!roundsRateSpeedup({100, 100}, {150, 150}, RoundsNoise{}, 0.1).hasInterval());
  }

  void tQuantiles() {
    QCOMPARE(tQuantile975(1), 12.706);
    QCOMPARE(tQuantile975(4), 2.776);
    QCOMPARE(tQuantile975(30), 2.042);
    QVERIFY(near(tQuantile975(1000), 1.959964));
    QVERIFY(std::isnan(tQuantile975(0)));
  }
};

QTEST_APPLESS_MAIN(TestStats)
#include "test_stats.moc"
