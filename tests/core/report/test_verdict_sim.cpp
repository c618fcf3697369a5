// The verdict rule held to its rates on recorded data: A/A experiments simulated over a trace of
// 40 real `workbench-cli run`s of the default experiment on a 2-core host that flips between two
// speeds (tests/data/traces/recorded-2core.json, written by bench_noise --trace), over a quiet host
// built from the figures measured on a quiet one (±1.6 %), and over a two-speed host built from
// that (16.5k and 10.7k samples/s in stretches of a minute or more), end faster or slower at most
// 5 % of the time under the full adaptive procedure; a known 10 % effect injected into the quiet
// and the built two-speed traces is found. bench_verdicts prints the whole table.
#include <QtTest/QtTest>

#include <cmath>

#include "wb/report/verdict_sim.h"

using namespace wb::report;

namespace {

const char* kRecorded = WB_SOURCE_DIR "/tests/data/traces/recorded-2core.json";
constexpr int kExperiments = 1000;
// The two speeds these 2-core hosts were measured at (train samples/s of the default experiment),
// in stretches of a minute or more.
constexpr double kFast = 16500, kSlow = 10700, kStretchS = 60;

RunTrace recorded() {
  auto t = loadTrace(kRecorded);
  if (!t.ok()) qFatal("%s", t.error().message.c_str());
  return *t;
}

RunTrace quiet() { return quietTrace(kFast, 0.016, 6.2, 2.57, 4000, 5, "built: quiet"); }

enum class Host { Recorded, Quiet, TwoSpeeds };

RunTrace traceOf(Host h) {
  if (h == Host::Recorded) return recorded();
  return h == Host::Quiet ? quiet() : twoSpeedTrace(quiet(), kFast, kSlow, kStretchS, 4000, 7);
}

Sequential adaptive(int most) {
  Sequential s;
  s.max_pairs = most;
  return s;
}

Sequential fixedPairs(int n) {
  Sequential s;
  s.fixed_pairs = n;
  return s;
}

QString describe(const SimOutcome& o) {
  return QStringLiteral("%1 experiments: %2 faster, %3 slower, %4 within noise, %5 pairs on average")
      .arg(o.experiments).arg(o.faster).arg(o.slower).arg(o.within).arg(o.mean_pairs);
}

}  // namespace

Q_DECLARE_METATYPE(Sequential)
Q_DECLARE_METATYPE(Host)

class TestVerdictSim : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void aaNeverAboveTheRate_data() {
    QTest::addColumn<Host>("host");
    QTest::addColumn<Sequential>("seq");
    QTest::newRow("recorded, adaptive up to 5") << Host::Recorded << adaptive(5);
    QTest::newRow("recorded, adaptive up to 10") << Host::Recorded << adaptive(10);
    QTest::newRow("recorded, 5 pairs") << Host::Recorded << fixedPairs(5);
    QTest::newRow("quiet, adaptive up to 5") << Host::Quiet << adaptive(5);
    QTest::newRow("quiet, adaptive up to 10") << Host::Quiet << adaptive(10);
    QTest::newRow("quiet, 3 pairs") << Host::Quiet << fixedPairs(3);
    QTest::newRow("two speeds, adaptive up to 5") << Host::TwoSpeeds << adaptive(5);
    QTest::newRow("two speeds, adaptive up to 10") << Host::TwoSpeeds << adaptive(10);
    QTest::newRow("two speeds, 5 pairs") << Host::TwoSpeeds << fixedPairs(5);
  }
  void aaNeverAboveTheRate() {
    QFETCH(Host, host);
    QFETCH(Sequential, seq);
    const SimOutcome o = simulateExperiments(traceOf(host), 0.0, seq, kExperiments, 11);
    QCOMPARE(o.experiments, kExperiments);
    QVERIFY2(o.calledRate() <= kFalseAlarmRate, qPrintable(describe(o)));
  }

  void aKnownTenPercentIsFound_data() {
    QTest::addColumn<Host>("host");
    QTest::newRow("quiet") << Host::Quiet;
    QTest::newRow("two speeds") << Host::TwoSpeeds;
  }
  void aKnownTenPercentIsFound() {
    QFETCH(Host, host);
    const RunTrace trace = traceOf(host);
    const SimOutcome o = simulateExperiments(trace, 0.10, adaptive(5), kExperiments, 13);
    QVERIFY2(o.rate(o.faster) >= 0.8, qPrintable(describe(o)));
    QCOMPARE(o.slower, 0);
    // A known 10 % slowdown likewise, never called faster.
    const SimOutcome slow = simulateExperiments(trace, 1 / 1.1 - 1, adaptive(5), kExperiments, 17);
    QVERIFY2(slow.rate(slow.slower) >= 0.8, qPrintable(describe(slow)));
    QCOMPARE(slow.faster, 0);
  }

  void twoSpeedTraceFlipsInStretches() {
    const RunTrace t = twoSpeedTrace(quiet(), kFast, kSlow, kStretchS, 400, 3);
    QCOMPARE(int(t.runs.size()), 400);
    int fast = 0, slow = 0;
    for (const auto& r : t.runs) {
      fast += r.train_samples_per_s > 0.9 * kFast;
      slow += r.train_samples_per_s < 1.1 * kSlow;
    }
    QVERIFY2(fast > 50 && slow > 50, qPrintable(QStringLiteral("%1 fast, %2 slow").arg(fast).arg(slow)));
    // Runs of the recorded trace keep what bench_noise measured.
    const RunTrace r = recorded();
    QCOMPARE(int(r.runs.size()), 40);
    for (const auto& run : r.runs) QVERIFY(run.train_samples_per_s > 0 && run.kernel_before_ms > 0);
  }

  void badTracesNameTheProblem() {
    const QString dir = QDir::tempPath() + QStringLiteral("/wb-trace-test");
    QDir().mkpath(dir);
    const std::string file = (dir + QStringLiteral("/bad.json")).toStdString();
    FILE* f = std::fopen(file.c_str(), "w");
    std::fputs(R"({"kind":"run-trace","runs":[{"train_samples_per_s":100},{"train_samples_per_s":100},)"
               R"({"train_samples_per_s":"fast"},{"train_samples_per_s":100}]})", f);
    std::fclose(f);
    const auto bad = loadTrace(file);
    QVERIFY(!bad.ok());
    QVERIFY2(bad.error().message.find("runs[2].train_samples_per_s") != std::string::npos, bad.error().message.c_str());
    QVERIFY(!loadTrace(dir.toStdString() + "/missing.json").ok());
  }
};

QTEST_APPLESS_MAIN(TestVerdictSim)
#include "test_verdict_sim.moc"
