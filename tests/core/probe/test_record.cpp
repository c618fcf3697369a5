// The worker probe's record (core/probe/src/record): the recommendation rule on measured-looking
// rounds (a gain only beyond the rounds' own noise) and on results stored without rounds, the
// verdict on the data path, the storage key and files (one per machine and experiment), the JSON
// round trip, the advice the advisor reads, the table (the ladder's workers step reading a stored
// result: tests/core/ladder/test_ladder_plan.cpp).
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include "wb/probe/record.h"
#include "wb/proto/rundir.h"

#include "../../support/probe_rows.h"

using nlohmann::json;
using namespace wb::probe;
using wb::records::MachineId;
using wb::render::Table;
using wb::stats::Verdict;

Q_DECLARE_METATYPE(std::vector<ProbeRow>)

namespace {

using wb::test::resultFor;
using wb::test::roundsOf;
using wb::test::rowsOf;

ProbeResult probed(std::vector<ProbeRow> rows) { return resultFor(wb::Config{}, {"h", "cpu", 2}, std::move(rows)); }

}  // namespace

class TestRecord : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // Each count once a round, rates per round: the recommendation is the smallest count the
  // fastest is not clearly faster than, against the rounds' own noise (at least ±2 %).
  void recommendsOnlyAGainBeyondTheRoundsNoise_data() {
    QTest::addColumn<std::vector<ProbeRow>>("rows");
    QTest::addColumn<int>("expected");
    QTest::addColumn<bool>("settled");
    QTest::newRow("2 workers 1.5x, 4 no better: 2")
        << roundsOf({{0, {1000, 1010, 990, 1005}}, {2, {1500, 1490, 1510, 1505}}, {4, {1503, 1498, 1495, 1510}}}) << 2
        << true;
    QTest::newRow("1 worker 5 % faster every round, rounds agree to 0.5 %: 1")
        << roundsOf({{0, {1000, 1005, 995, 1000}}, {1, {1050, 1056, 1044, 1050}}}) << 1 << true;
    QTest::newRow("1 worker 1.5 % faster every round: within the 2 % floor, 0")
        << roundsOf({{0, {1000, 1001, 999, 1000}}, {1, {1015, 1016, 1014, 1015}}}) << 0 << true;
    QTest::newRow("rounds disagree by 10 %: 1 worker's 3 % is noise, 0")
        << roundsOf({{0, {1000, 1100, 950, 1050}}, {1, {1080, 1050, 1030, 1000}}}) << 0 << false;
    QTest::newRow("1 worker 3 % faster on average, rounds disagree by 10 %: noise, 0 (2 % alone would say 1)")
        << roundsOf({{0, {1000, 1100, 950, 1050}}, {1, {1100, 1080, 1000, 1050}}}) << 0 << false;
    QTest::newRow("the whole machine slows in round 2: a shared shift is no noise")
        << roundsOf({{0, {1000, 700, 1000, 700}}, {2, {1200, 840, 1200, 840}}}) << 2 << true;
    QTest::newRow("workers slow it down: 0")
        << roundsOf({{0, {1000, 1002, 998}}, {1, {800, 801, 799}}, {2, {700, 702, 698}}}) << 0 << true;
  }
  void recommendsOnlyAGainBeyondTheRoundsNoise() {
    QFETCH(std::vector<ProbeRow>, rows);
    QFETCH(int, expected);
    QFETCH(bool, settled);
    const ProbeResult r = probed(rows);
    QCOMPARE(r.recommended, expected);
    QCOMPARE(r.settled(), settled);
    QVERIFY(r.noise().df > 0);
    QVERIFY(r.noiseBand() >= kProbeMinBand);
    // The choice against 0 workers: clearly faster when a count above 0 is chosen, never a
    // "faster" for a count not chosen below the chosen one.
    const ProbeRow* zero = r.row(0);
    const ProbeRow* chosen = r.row(expected);
    QVERIFY(zero && chosen);
    if (chosen != zero) {
      const auto e = r.speedupOver(*zero, *chosen);
      QCOMPARE(e.verdict, Verdict::Faster);
      QVERIFY(e.lo > 1.0 && e.point >= 1.0 + r.noiseBand());
    }
    const QString verdict = QString::fromStdString(r.verdict());
    QVERIFY2(verdict.contains(QStringLiteral("Recommended: %1 loader worker(s), the smallest count the fastest").arg(expected)),
             qPrintable(verdict));
    QVERIFY2(verdict.contains(QStringLiteral("interleaved rounds, whose noise is ±")), qPrintable(verdict));
  }

  void roundsNoiseIsWhatTheRoundsDisagreeOn() {
    // Every round a common factor: nothing is left once rounds and counts are taken out.
    const ProbeResult shared = probed(roundsOf({{0, {1000, 700, 1300}}, {1, {2000, 1400, 2600}}}));
    QCOMPARE(shared.noise().df, 2);
    QVERIFY(shared.noise().sigma < 1e-9);
    QCOMPARE(shared.noiseBand(), kProbeMinBand);
    // Disagreement between counts from round to round is noise, and widens the interval.
    const ProbeResult quiet = probed(roundsOf({{0, {1000, 1010, 990}}, {1, {1500, 1490, 1510}}}));
    const ProbeResult noisy = probed(roundsOf({{0, {1000, 1200, 900}}, {1, {1500, 1300, 1600}}}));
    QVERIFY(noisy.noise().sigma > 5 * quiet.noise().sigma);
    const auto q = quiet.speedupOver(quiet.rows[0], quiet.rows[1]), n = noisy.speedupOver(noisy.rows[0], noisy.rows[1]);
    QVERIFY(q.hasInterval() && n.hasInterval());
    QVERIFY(n.hi / n.lo > q.hi / q.lo);
    QVERIFY(q.lo < 1.5 && 1.5 < q.hi);
  }

  // A probe stored before rounds were kept: the smallest count within 2 % of the best, no interval.
  void withoutRoundsTheSmallestWithinTwoPercent_data() {
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
  void withoutRoundsTheSmallestWithinTwoPercent() {
    QFETCH(std::vector<ProbeRow>, rows);
    QFETCH(int, expected);
    const ProbeResult r = probed(rows);
    QCOMPARE(r.recommended, expected);
    QVERIFY(!r.settled());
    if (expected < 0) return;
    double best = 0;
    for (const auto& row : rows) best = std::max(best, row.samples_per_s);
    for (const auto& row : rows) {
      if (row.workers == expected) QVERIFY(row.samples_per_s >= best * 0.98);
      if (row.workers < expected) QVERIFY(row.samples_per_s < best * 0.98);
    }
    QVERIFY(QString::fromStdString(r.verdict()).contains(QStringLiteral("no interval: fewer than 2 rounds")));
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
    ProbeResult r = probed(roundsOf({{0, {1000, 1001}}, {1, {990, 991}}}));
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
    const ProbeResult r = probed(roundsOf({{0, {1000, 1010}}, {1, {1500, 1510}}, {2, {1490, 1500}}}));
    const json doc = probeJson(r);
    QCOMPARE(doc["recommended"].get<int>(), 1);
    QCOMPARE(doc["rounds"].get<int>(), 2);
    QCOMPARE(doc["candidates"][1]["rounds"], json::array({1500.0, 1510.0}));
    QCOMPARE(doc["candidates"][1]["vs_reference"]["verdict"].get<std::string>(), std::string("faster"));
    QVERIFY(doc["noise"]["df"].get<int>() == 2 && doc["noise"]["band"].get<double>() >= kProbeMinBand);
    QCOMPARE(doc["data_not_bottleneck"].get<bool>(), true);
    auto back = probeFromJson(doc);
    QVERIFY(back.ok());
    QCOMPARE(probeJson(*back), doc);
    QVERIFY(!probeFromJson(json{{"kind", "something-else"}}).ok());
    // One field list writes and reads it: a key a newer writer added passes through a rewrite.
    json newer = doc;
    newer["written_later"] = {{"x", 1}};
    auto kept = probeFromJson(newer);
    QVERIFY(kept.ok());
    QCOMPARE(probeJson(*kept)["written_later"]["x"].get<int>(), 1);
  }

  // A file written before the rounds were kept (v 1: no rounds, no noise) still loads: its stored
  // recommendation, no interval.
  void aProbeStoredBeforeRoundsLoads() {
    const json old = {{"v", 1}, {"kind", "probe-workers"}, {"key", "0123456789abcdef"},
                      {"measured_at", "2026-11-30T10:00:00Z"}, {"host", {{"name", "h"}, {"cpu", "c"}, {"cores", 2}}},
                      {"candidates", json::array({{{"workers", 0}, {"samples_per_s", 1000.0}, {"steps", 10}},
                                                  {{"workers", 2}, {"samples_per_s", 1100.0}, {"steps", 11}}})},
                      {"recommended", 2}, {"seconds_per_candidate", 3.0}};
    auto r = probeFromJson(old);
    QVERIFY(r.ok());
    QCOMPARE(r->recommended, 2);
    QCOMPARE(r->rounds, 0);
    QCOMPARE(r->seconds_per_round, 1.5);  // seconds_per_candidate was over two rounds
    QVERIFY(!r->speedupOver(r->rows[0], r->rows[1]).hasInterval());
    QCOMPARE(QString::fromStdString(probeDate(*r)), QStringLiteral("2026-11-30 10:00 UTC"));
    const Table t = probeTable(*r);
    QCOMPARE(QString::fromStdString(t.rows[1][2].text), QStringLiteral("1.10×"));
  }

  // What the advisor and the ladder read: the probe's count and findings, else the rule of thumb.
  void adviceIsTheProbeElseTheRuleOfThumb() {
    QCOMPARE(workersAdvice(nullptr, 16).workers, 4);
    QVERIFY(!workersAdvice(nullptr, 2).measured);
    const ProbeResult r = probed(roundsOf({{0, {1000, 1010}}, {1, {1500, 1510}}}));
    const auto a = workersAdvice(&r, 16);
    QVERIFY(a.measured && a.data_not_bottleneck && !a.contended);
    QCOMPARE(a.workers, 1);
    QCOMPARE(QString::fromStdString(a.source()), QStringLiteral("the worker probe of 2026-12-01 08:40 UTC"));
    json caps = {{"cores", 16}};
    attachProbe(caps, r);
    const auto fromCaps = wb::advice::workersAdvice(caps);
    QCOMPARE(fromCaps.workers, 1);
    QCOMPARE(fromCaps.date, a.date);
    QVERIFY(fromCaps.measured && fromCaps.data_not_bottleneck);
  }

  void tableHasOneRowPerCandidateAndMarksTheRecommendation() {
    const ProbeResult r = probed(roundsOf({{0, {1000, 1000, 1000}}, {1, {1500, 1490, 1510}}, {2, {1490, 1495, 1485}}}));
    const Table t = probeTable(r);
    QCOMPARE(t.rows.size(), size_t{3});
    QCOMPARE(QString::fromStdString(t.columns[2].title), QStringLiteral("× vs 0 workers"));
    QCOMPARE(*t.rows[1][2].number, 1.5);
    const QString cell = QString::fromStdString(t.rows[1][2].text);
    QVERIFY2(cell.startsWith(QStringLiteral("1.50× [")) && cell.endsWith(QStringLiteral("] faster")), qPrintable(cell));
    QCOMPARE(QString::fromStdString(t.rows[0][2].text), QStringLiteral("1.00×"));
    QCOMPARE(QString::fromStdString(t.rows[1].back().text), QStringLiteral("← recommended"));
    QVERIFY(t.rows[0].back().text.empty() && t.rows[2].back().text.empty());
    bool noted = false;
    for (const auto& n : t.notes) noted = noted || n.find("in 3 interleaved rounds") != std::string::npos;
    QVERIFY(noted);
    const std::string svg = toSvg(probeChart(r));
    QVERIFY(svg.find("1.50× faster · recommended") != std::string::npos);
    QVERIFY(svg.find("2 workers") != std::string::npos);
    QVERIFY(svg.find("1490/s") != std::string::npos);
  }
};

QTEST_APPLESS_MAIN(TestRecord)
#include "test_record.moc"
