// Comparison maths on hand-made run folders: time to target (interpolated), speedups, Δ acc,
// a target never reached, a run still in progress, peak memory, the config diff.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <cmath>

#include "report_fixture.h"
#include "wb/report/compare.h"

using fixture::FakeRun;
using nlohmann::json;
using namespace wb::report;

namespace {
std::vector<EvalSample> evalsOf(const QList<QPointF>& points) {
  std::vector<EvalSample> out;
  int epoch = 1;
  for (const auto& p : points) {
    EvalSample e;
    e.epoch = epoch++;
    e.t = p.x();
    e.val_acc = p.y();
    out.push_back(e);
  }
  return out;
}
}  // namespace

class TestCompare : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void timeToTarget_data() {
    QTest::addColumn<QList<QPointF>>("evals");  // (t, val_acc)
    QTest::addColumn<double>("target");
    QTest::addColumn<double>("expected");       // -1 = not reached
    const QList<QPointF> rising{{10, 0.70}, {20, 0.80}, {30, 0.90}};
    QTest::newRow("interpolated between evals") << rising << 0.75 << 15.0;
    QTest::newRow("exactly at an eval") << rising << 0.80 << 20.0;
    QTest::newRow("first eval already above") << rising << 0.60 << 10.0;
    QTest::newRow("never reached") << rising << 0.95 << -1.0;
    QTest::newRow("crossing, then a dip") << QList<QPointF>{{10, 0.70}, {20, 0.82}, {30, 0.78}} << 0.80 << 10.0 + 10.0 / 12.0 * 10.0;
    QTest::newRow("plateau, then a rise") << QList<QPointF>{{10, 0.70}, {20, 0.70}, {30, 0.90}} << 0.80 << 25.0;
    QTest::newRow("no evaluations") << QList<QPointF>{} << 0.5 << -1.0;
  }
  void timeToTarget() {
    QFETCH(QList<QPointF>, evals);
    QFETCH(double, target);
    QFETCH(double, expected);
    auto t = timeToAccuracy(evalsOf(evals), target);
    if (expected < 0) {
      QVERIFY(!t.has_value());
    } else {
      QVERIFY(t.has_value());
      QVERIFY2(std::fabs(*t - expected) < 1e-9, qPrintable(QString::number(*t)));
    }
  }

  void speedupsAndDeltasFromRunFolders() {
    QTemporaryDir dir;
    // Baseline: evals 70 % at t=10, 80 % at t=20; 640 samples/s after warm-up; 100 MiB.
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21);
    // Faster run: 75 % at t=5, 85 % at t=10; twice the throughput; 150 MiB; two config changes.
    FakeRun fast = fixture::twoEpochRun(5, 0.75, 10, 0.85, 1280);
    fast.set("speedups.workers", 2).set("speedups.precision", "bf16-mixed");
    for (auto& ev : fast.events)
      if (ev["type"] == "step") ev["mem"]["rss_peak"] = 150 << 20;
    fast.end("ok", 11);
    auto b = loadRun(base.write(dir.path(), QStringLiteral("base")));
    auto f = loadRun(fast.write(dir.path(), QStringLiteral("fast")));
    QVERIFY2(b.ok(), b.ok() ? "" : b.error().message.c_str());
    QVERIFY(f.ok());
    QCOMPARE(QString::fromStdString(b->status), QStringLiteral("ok"));

    Comparison cmp = compareRuns(*b, {*b, *f}, std::nullopt);
    QCOMPARE(int(cmp.rows.size()), 2);  // the baseline passed twice is shown once
    QVERIFY(!cmp.target_user_set);
    QCOMPARE(cmp.target_acc, 0.80);     // the baseline's best
    const ComparisonRow& br = cmp.rows[0];
    const ComparisonRow& fr = cmp.rows[1];
    QVERIFY(br.is_baseline);
    QCOMPARE(*br.m.time_to_target_s, 20.0);
    QCOMPARE(*fr.m.time_to_target_s, 7.5);  // 75 % at 5 s, 85 % at 10 s: 80 % halfway
    QCOMPARE(*fr.speedup_target, 20.0 / 7.5);
    QCOMPARE(*fr.speedup_wall, 21.0 / 11.0);
    QCOMPARE(*br.m.samples_per_s, 640.0);   // warm-up interval and epoch boundary left out
    QCOMPARE(*fr.m.samples_per_s, 1280.0);
    QCOMPARE(*fr.speedup_throughput, 2.0);
    QCOMPARE(*fr.speedup_epoch, 10.0 / 5.0);  // mean epoch seconds 10 vs 5
    QVERIFY(std::fabs(*fr.delta_best_pp - 5.0) < 1e-9);
    QVERIFY(std::fabs(*fr.delta_final_pp - 5.0) < 1e-9);
    QCOMPARE(*fr.mem_ratio, 1.5);
    QCOMPARE(QString::fromStdString(fr.m.peak_mem_kind), QStringLiteral("host"));
    QCOMPARE(fr.m.epochs, 2);

    QCOMPARE(int(fr.diff.size()), 2);
    QCOMPARE(QString::fromStdString(describeDiff(fr.diff)),
             QStringLiteral("speedups.precision 32-true → bf16-mixed; speedups.workers 0 → 2"));

    Table t = comparisonTable(cmp);
    QCOMPARE(int(t.rows.size()), 2);
    QCOMPARE(int(t.rows[1].size()), int(t.columns.size()));
    auto col = [&](const char* key) {
      for (size_t i = 0; i < t.columns.size(); ++i)
        if (t.columns[i].key == key) return int(i);
      return -1;
    };
    QCOMPARE(QString::fromStdString(t.rows[1][col("speedup_target")].text), QStringLiteral("2.67×"));
    QCOMPARE(QString::fromStdString(t.rows[1][col("delta_best_pp")].text), QStringLiteral("+5.00 pp"));
    QCOMPARE(QString::fromStdString(t.rows[1][col("best_val_acc")].text), QStringLiteral("85.00 %"));
  }

  void targetNeverReachedSaysSo() {
    FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
    base.end("ok", 21);
    FakeRun slow = fixture::twoEpochRun(10, 0.60, 20, 0.78, 640);
    slow.end("ok", 22);
    Comparison cmp = compareRuns(base.record("base"), {slow.record("slow")}, std::nullopt);
    const ComparisonRow& r = cmp.rows[1];
    QVERIFY(!r.m.time_to_target_s.has_value());
    QVERIFY(!r.speedup_target.has_value());
    QVERIFY(r.speedup_wall.has_value());  // wall time still compares
    Table t = comparisonTable(cmp);
    bool said = false;
    for (const auto& c : t.rows[1]) said = said || c.text == "not reached";
    QVERIFY(said);
    // A user-set lower target is reached by both.
    Comparison lower = compareRuns(base.record("base"), {slow.record("slow")}, 0.65);
    QVERIFY(lower.target_user_set);
    QVERIFY(lower.rows[1].m.time_to_target_s.has_value());
    QCOMPARE(*lower.rows[1].m.time_to_target_s, 10.0 + 0.05 / 0.18 * 10.0);
  }

  void runInProgressOrTruncatedLoads() {
    QTemporaryDir dir;
    FakeRun live = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);  // no end, no summary.json
    live.step(3, 999, 99999, 25, 0.1);                              // cut in half on disk
    auto r = loadRun(live.write(dir.path(), QStringLiteral("live"), /*truncate=*/true));
    QVERIFY(r.ok());
    QCOMPARE(QString::fromStdString(r->status), QStringLiteral("running"));
    QVERIFY(!r->finished);
    QCOMPARE(r->malformed_lines, int64_t(1));
    QVERIFY(!r->problems.empty());
    RunMetrics m = computeMetrics(*r, 0.9);
    QVERIFY(m.wall_partial);
    QCOMPARE(*m.wall_s, 20.0);  // the latest complete event
    QVERIFY(!m.time_to_target_s.has_value());
    Comparison cmp = compareRuns(*r, {}, 0.9);
    Table t = comparisonTable(cmp);
    bool yet = false, soFar = false;
    for (const auto& c : t.rows[0]) {
      yet = yet || c.text == "not reached yet";
      soFar = soFar || c.text.find("so far") != std::string::npos;
    }
    QVERIFY(yet);
    QVERIFY(soFar);
  }

  void loadRunErrorsNameTheFolder() {
    QTemporaryDir dir;
    auto missing = loadRun(dir.filePath(QStringLiteral("nope")).toStdString());
    QVERIFY(!missing.ok());
    QVERIFY(missing.error().message.find("nope") != std::string::npos);
    auto empty = loadRun(dir.path().toStdString());
    QVERIFY(!empty.ok());
    QVERIFY(empty.error().message.find("not a run folder") != std::string::npos);
  }

  void peakMemoryByDevice() {
    // CPU: ranks share the host, so their peaks add up.
    FakeRun cpu;
    cpu.start().step(1, 10, 640, 1, 1.0, {1, 0, 2, 3, 1, 0}, 100 << 20, 0).step(1, 10, 640, 1, 1.0, {1, 0, 2, 3, 1, 0}, 60 << 20, 1);
    RunMetrics m = computeMetrics(cpu.record(), std::nullopt);
    QCOMPARE(*m.peak_mem_bytes, double((100 << 20) + (60 << 20)));
    QCOMPARE(QString::fromStdString(m.peak_mem_kind), QStringLiteral("host"));
    // CUDA: each GPU has its own limit: the largest per-rank peak.
    FakeRun gpu;
    gpu.start("cuda:0").step(1, 10, 640, 1, 1.0).deviceMem(300 << 20).step(1, 10, 640, 1, 1.0, {1, 0, 2, 3, 1, 0}, 1, 1).deviceMem(200 << 20);
    m = computeMetrics(gpu.record(), std::nullopt);
    QCOMPARE(*m.peak_mem_bytes, double(300 << 20));
    QCOMPARE(QString::fromStdString(m.peak_mem_kind), QStringLiteral("device"));
  }

  void fp16SkippedStepsAreTheLastCount() {
    FakeRun r;
    r.start().step(1, 10, 640, 1, 1.0).amp(65536, 3).step(1, 20, 1280, 2, 1.0).amp(32768, 5);
    RunMetrics m = computeMetrics(r.record(), std::nullopt);
    QCOMPARE(*m.skipped_steps, int64_t(5));
    QCOMPARE(*m.amp_scale, 32768.0);
  }

  void configDiffListsAddedAndRemoved() {
    json a = {{"x", 1}, {"s", {{"p", "a"}, {"gone", true}}}};
    json b = {{"x", 1}, {"s", {{"p", "b"}, {"new", 2}}}};
    auto d = configDiff(a, b);
    QCOMPARE(int(d.size()), 3);
    QCOMPARE(QString::fromStdString(describeDiff(d)),
             QStringLiteral("s.new (absent) → 2; s.p a → b; s.gone true → (absent)"));
    QCOMPARE(QString::fromStdString(describeDiff({})), QStringLiteral("same config"));
  }

  void parseTarget_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("expected");  // -1 = error
    QTest::newRow("fraction") << "0.85" << 0.85;
    QTest::newRow("percent number") << "85" << 0.85;
    QTest::newRow("percent sign") << "85%" << 0.85;
    QTest::newRow("one") << "1" << 1.0;
    QTest::newRow("zero") << "0" << -1.0;
    QTest::newRow("too big") << "150" << -1.0;
    QTest::newRow("garbage") << "abc" << -1.0;
    QTest::newRow("trailing junk") << "0.8x" << -1.0;
  }
  void parseTarget() {
    QFETCH(QString, text);
    QFETCH(double, expected);
    auto r = parseTargetAccuracy(text.toStdString());
    if (expected < 0) {
      QVERIFY(!r.ok());
      QVERIFY(r.error().message.find(text.toStdString()) != std::string::npos);
    } else {
      QVERIFY(r.ok());
      QVERIFY(std::fabs(*r - expected) < 1e-12);
    }
  }
};

QTEST_APPLESS_MAIN(TestCompare)
#include "test_compare.moc"
