// The worker probe's pure parts: the recommendation rule on measured-looking rows, the verdict on
// the data path, the storage key and files (one per machine and experiment), the JSON round trip,
// the table (the ladder's workers step reading a stored result: tests/core/ladder/test_ladder_plan.cpp).
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include "wb/report/probe.h"
#include "wb/proto/rundir.h"

#include "../../support/probe_rows.h"

using nlohmann::json;
using namespace wb::report;

Q_DECLARE_METATYPE(std::vector<ProbeRow>)

namespace {

using wb::test::resultFor;
using wb::test::rowsOf;

}  // namespace

class TestProbe : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void recommendsTheSmallestWithinTolerance_data() {
    QTest::addColumn<std::vector<ProbeRow>>("rows");
    QTest::addColumn<int>("expected");
    QTest::newRow("flat: 0 workers is within 2 % of the best") << rowsOf({{0, 1000}, {1, 1010}, {2, 1005}}) << 0;
    QTest::newRow("2 is best, 4 no better") << rowsOf({{0, 500}, {1, 900}, {2, 1000}, {4, 1005}}) << 2;
    QTest::newRow("just outside 2 %") << rowsOf({{0, 979}, {1, 1000}}) << 1;
    QTest::newRow("exactly at 2 %") << rowsOf({{0, 980}, {1, 1000}}) << 0;
    QTest::newRow("the best is the largest count") << rowsOf({{0, 100}, {1, 200}, {2, 300}, {4, 600}}) << 4;
    QTest::newRow("candidates not in order") << rowsOf({{4, 1000}, {0, 400}, {2, 995}, {1, 700}}) << 2;
    QTest::newRow("workers slow it down") << rowsOf({{0, 1000}, {1, 800}, {2, 700}}) << 0;
    QTest::newRow("no rows") << std::vector<ProbeRow>{} << -1;
  }
  void recommendsTheSmallestWithinTolerance() {
    QFETCH(std::vector<ProbeRow>, rows);
    QFETCH(int, expected);
    const int pick = recommendWorkers(rows);
    QCOMPARE(pick, expected);
    if (pick < 0) return;
    // Consistent with the rows: within 2 % of the best, and no smaller count is.
    double best = 0;
    for (const auto& r : rows) best = std::max(best, r.samples_per_s);
    for (const auto& r : rows) {
      if (r.workers == pick) QVERIFY(r.samples_per_s >= best * 0.98);
      if (r.workers < pick) QVERIFY(r.samples_per_s < best * 0.98);
    }
  }

  void saysWhenTheDataPathIsNotTheBottleneck_data() {
    QTest::addColumn<double>("loaderBatchesPerS");
    QTest::addColumn<double>("stepMs");
    QTest::addColumn<bool>("notBottleneck");
    QTest::newRow("loader 1 ms, step 20 ms") << 1000.0 << 20.0 << true;
    QTest::newRow("loader 10 ms, step 5 ms") << 100.0 << 5.0 << false;
    QTest::newRow("loader 2 ms, step 10 ms (20 %)") << 500.0 << 10.0 << false;
  }
  void saysWhenTheDataPathIsNotTheBottleneck() {
    QFETCH(double, loaderBatchesPerS);
    QFETCH(double, stepMs);
    QFETCH(bool, notBottleneck);
    ProbeResult r = resultFor(wb::Config{}, {"h", "cpu", 2}, rowsOf({{0, 1000}, {1, 990}}));
    r.loader_batches_per_s = loaderBatchesPerS;
    r.step_alone_ms = stepMs;
    QCOMPARE(r.dataNotBottleneck(), notBottleneck);
    const QString verdict = QString::fromStdString(r.verdict());
    QVERIFY2(verdict.contains(QStringLiteral("Recommended: 0 loader worker(s)")), qPrintable(verdict));
    QCOMPARE(verdict.contains(QStringLiteral("not the bottleneck")), notBottleneck);
    QCOMPARE(verdict.contains(QStringLiteral("cannot help")), notBottleneck);
    QVERIFY(!r.contended());
    QVERIFY(!verdict.contains(QStringLiteral("contention")));
    // Other processes' load during a candidate: the verdict leads with it.
    r.rows[1].other_cores = 1.2;
    QVERIFY(r.contended());
    QVERIFY(QString::fromStdString(r.verdict()).startsWith(QStringLiteral("Measured under contention: other processes used up to 1.2 of 2 cores")));
    QVERIFY(QString::fromStdString(r.verdict()).contains(QStringLiteral("Recommended: 0")));
  }

  void keyFollowsMachineDataModelAndBatchOnly() {
    const MachineId m{"host-a", "Some CPU @ 2 GHz", 2};
    wb::Config base;
    const std::string key = probeKey(base, m);
    QCOMPARE(key.size(), size_t{16});
    QCOMPARE(probeKey(base, m), key);  // stable
    wb::Config c = base;
    c.model.name = "resnet18";
    QVERIFY(probeKey(c, m) != key);
    c = base;
    c.train.batch_size = 128;
    QVERIFY(probeKey(c, m) != key);
    c = base;
    c.data.limit_train = 1000;
    QVERIFY(probeKey(c, m) != key);
    c = base;
    c.data.dataset = "folder:/tmp/x";
    QVERIFY(probeKey(c, m) != key);
    QVERIFY(probeKey(base, {"host-b", m.cpu, 2}) != key);
    QVERIFY(probeKey(base, {m.host, "Other CPU", 2}) != key);
    QVERIFY(probeKey(base, {m.host, m.cpu, 4}) != key);
    // The speedups and the training length are not part of the experiment's data path.
    c = base;
    c.speedups.workers = 3;
    c.speedups.precision = "bf16-mixed";
    c.train.epochs = 5;
    c.optim.lr = 0.1;
    QCOMPARE(probeKey(c, m), key);
  }

  void storesOneFilePerMachineAndExperiment() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::filesystem::path dir = tmp.path().toStdString();
    const MachineId m{"host-a", "cpu", 2};
    wb::Config lenet, mlp;
    mlp.model.name = "mlp";
    QVERIFY(saveProbe(resultFor(lenet, m, rowsOf({{0, 1000}, {2, 1500}})), dir).ok());
    QVERIFY(saveProbe(resultFor(mlp, m, rowsOf({{0, 900}, {1, 905}})), dir).ok());
    QVERIFY(std::filesystem::exists(dir / (probeKey(lenet, m) + ".json")));
    QVERIFY(std::filesystem::exists(dir / (probeKey(mlp, m) + ".json")));

    auto a = loadProbe(lenet, m, dir), b = loadProbe(mlp, m, dir);
    QVERIFY(a && b);
    QCOMPARE(a->recommended, 2);
    QCOMPARE(b->recommended, 0);
    QCOMPARE(a->rows.size(), size_t{2});
    QCOMPARE(a->rows[1].samples_per_s, 1500.0);
    QCOMPARE(a->experiment, probeExperimentFields(lenet));
    QVERIFY(!loadProbe(lenet, {"host-b", "cpu", 2}, dir));  // another machine: nothing stored
    wb::Config other = lenet;
    other.train.batch_size = 32;
    QVERIFY(!loadProbe(other, m, dir));

    // Probing lenet again replaces lenet's result only.
    QVERIFY(saveProbe(resultFor(lenet, m, rowsOf({{0, 1000}, {1, 1001}})), dir).ok());
    QCOMPARE(loadProbe(lenet, m, dir)->recommended, 0);
    QCOMPARE(loadProbe(mlp, m, dir)->rows[0].samples_per_s, 900.0);
    // A file under the key whose record names another key is not taken for this experiment.
    json doc = probeJson(resultFor(mlp, m, rowsOf({{0, 1}})));
    QVERIFY(wb::proto::writeJsonAtomic(dir / (probeKey(lenet, m) + ".json"), doc).ok());
    QVERIFY(!loadProbe(lenet, m, dir));
  }

  void jsonRoundTrips() {
    const ProbeResult r = resultFor(wb::Config{}, {"h", "c", 2}, rowsOf({{0, 1000}, {1, 1500}, {2, 1490}}));
    const json doc = probeJson(r);
    QCOMPARE(doc["recommended"].get<int>(), 1);
    QCOMPARE(doc["data_not_bottleneck"].get<bool>(), true);
    auto back = probeFromJson(doc);
    QVERIFY(back.ok());
    QCOMPARE(probeJson(*back), doc);
    QVERIFY(!probeFromJson(json{{"kind", "something-else"}}).ok());
  }

  void tableHasOneRowPerCandidateAndMarksTheRecommendation() {
    const ProbeResult r = resultFor(wb::Config{}, {"h", "c", 2}, rowsOf({{0, 1000}, {1, 1500}, {2, 1490}}));
    const Table t = probeTable(r);
    QCOMPARE(t.rows.size(), size_t{3});
    QCOMPARE(QString::fromStdString(t.columns[2].title), QStringLiteral("× vs 0 workers"));
    QCOMPARE(*t.rows[1][2].number, 1.5);
    QCOMPARE(QString::fromStdString(t.rows[1].back().text), QStringLiteral("← recommended"));
    QVERIFY(t.rows[0].back().text.empty() && t.rows[2].back().text.empty());
    const std::string svg = toSvg(probeChart(r));
    QVERIFY(svg.find("1.50× · recommended") != std::string::npos);
    QVERIFY(svg.find("2 workers") != std::string::npos);
    QVERIFY(svg.find("1490/s") != std::string::npos);
  }
};

QTEST_APPLESS_MAIN(TestProbe)
#include "test_probe.moc"
