// The runs list: its throughput column is training throughput (summary.train_samples_per_s, never
// the older steps + evaluation samples_per_s), and a run measured under CPU contention is marked
// and gives no speedup against the baseline (nor does a contended baseline).
#include <QtTest/QtTest>

#include "runs/run.h"
#include "runs/runs_model.h"
#include "ui_test_util.h"

using nlohmann::json;
using namespace wb::ui;
namespace t = wb::ui::test;

namespace {

const json kRemove = json(json::value_t::discarded);

// A finished run folder loaded as the history loads it (summary.json only, events on demand).
Run* historyRun(const QTemporaryDir& root, const QString& id, const json& summaryFields, RunsModel& model) {
  QByteArray events = t::line(t::stepEvent(10, 2.0)) + t::line(t::stepEvent(20, 1.5));
  const QString dir = t::writeRunDir(root.path(), id, id, events, QStringLiteral("ok"), summaryFields);
  Run* run = Run::fromDirectory(dir);
  model.addRun(run, false);
  return run;
}

QVariant cell(const RunsModel& model, const Run* run, int column, int role = Qt::DisplayRole) {
  return model.index(model.rowOf(run), column).data(role);
}

}  // namespace

class TestRunsModel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { t::setUpEnvironment(); }

  void throughputIsTrainingThroughput_data() {
    QTest::addColumn<QString>("fields");      // summary.json fields over the current contract
    QTest::addColumn<QString>("listed");      // the column before the events are read
    QTest::addColumn<QString>("afterEvents"); // once the run's events are loaded (ticked)
    QTest::newRow("summary.train_samples_per_s") << R"({"train_samples_per_s":812.4})" << "812" << "812";
    QTest::newRow("older summary: samples_per_s is not shown") << R"({"train_samples_per_s":"remove","samples_per_s":300})"
                                                               << "" << "660";
    QTest::newRow("null in the summary") << R"({"train_samples_per_s":null})" << "" << "660";
  }
  void throughputIsTrainingThroughput() {
    QFETCH(QString, fields);
    QFETCH(QString, listed);
    QFETCH(QString, afterEvents);
    json f = json::parse(fields.toStdString());
    for (auto& [key, value] : f.items())
      if (value == "remove") value = kRemove;
    auto root = t::scratchRoot();
    RunsModel model;
    Run* run = historyRun(root, QStringLiteral("r"), f, model);
    QCOMPARE(model.headerData(RunsModel::ColThroughput, Qt::Horizontal, Qt::DisplayRole).toString(),
             QStringLiteral("Train samples/s"));
    const QLocale loc;
    auto shown = [&] { return cell(model, run, RunsModel::ColThroughput).toString().remove(loc.groupSeparator()); };
    QCOMPARE(shown(), listed);
    model.setShown(run, true);  // loads the events: step samples_per_s is training-only already
    QCOMPARE(shown(), afterEvents);
  }

  void speedupIsOnTrainingThroughput() {
    auto root = t::scratchRoot();
    RunsModel model;
    Run* base = historyRun(root, QStringLiteral("base"), json::object(), model);
    Run* fast = historyRun(root, QStringLiteral("fast"), {{"train_samples_per_s", 2500.0}, {"samples_per_s", 100.0}}, model);
    model.setBaseline(base);
    QCOMPARE(cell(model, fast, RunsModel::ColSpeedup).toString(), QStringLiteral("2.50×"));
    QVERIFY(cell(model, fast, RunsModel::ColName, Qt::DecorationRole).isNull());
  }

  void contendedRunIsMarked_data() {
    QTest::addColumn<bool>("baselineContended");
    QTest::newRow("the run") << false;
    QTest::newRow("the baseline") << true;
  }
  void contendedRunIsMarked() {
    QFETCH(bool, baselineContended);
    auto root = t::scratchRoot();
    RunsModel model;
    const json busy = {{"cpu", t::contendedCpu(0.9)}}, idle = json::object();
    Run* base = historyRun(root, QStringLiteral("base"), baselineContended ? busy : idle, model);
    Run* run = historyRun(root, QStringLiteral("run"), baselineContended ? idle : busy, model);
    model.setBaseline(base);
    Run* marked = baselineContended ? base : run;
    QVERIFY(marked->contended());
    QCOMPARE(marked->contentionNote(), QStringLiteral("another process used 0.9 of 2 cores"));
    QVERIFY(!cell(model, marked, RunsModel::ColName, Qt::DecorationRole).value<QIcon>().isNull());
    QVERIFY(cell(model, marked, RunsModel::ColName, Qt::ToolTipRole).toString().contains(QStringLiteral("0.9 of 2 cores")));
    QVERIFY(cell(model, baselineContended ? run : base, RunsModel::ColName, Qt::DecorationRole).isNull());
    // No multiplier for the run either way: its speedup rests on a contended measurement.
    QCOMPARE(cell(model, run, RunsModel::ColSpeedup).toString(), QStringLiteral("contended"));
    QVERIFY(std::isnan(model.speedupVsBaseline(run)));
    const QString why = cell(model, run, RunsModel::ColSpeedup, Qt::ToolTipRole).toString();
    QVERIFY2(why.contains(baselineContended ? QStringLiteral("the baseline: another process") : QStringLiteral("another process")),
             qPrintable(why));
  }

  void liveRunContentionFromStepEvents_data() {
    QTest::addColumn<int>("worldSize");
    QTest::addColumn<QString>("note");
    QTest::newRow("one rank: the rest is another process") << 1 << "another process used 0.9 of 2 cores";
    QTest::newRow("two ranks: the other rank is the run's own") << 2 << "";
  }
  void liveRunContentionFromStepEvents() {
    QFETCH(int, worldSize);
    QFETCH(QString, note);
    Run run(Run::Origin::Launched);
    run.ingest(t::startEvent(0, "cpu", worldSize));
    for (double busy : {1.8, 2.0}) {
      json step = t::stepEvent(10, 2.0);
      step["cpu"] = {{"process_cores", 1.0}, {"machine_busy_cores", busy}, {"cores", 2}};
      run.ingest(step);
    }
    QCOMPARE(run.contentionNote(), note);
    // The summary decides once it arrives.
    json end = t::endEvent("ok", wb::proto::toJson(t::summaryOf(QStringLiteral("ok"), QStringLiteral("x"), QStringLiteral("x"))));
    run.ingest(end);
    QVERIFY(!run.contended());
  }
};

QTEST_MAIN(TestRunsModel)
#include "test_runs_model.moc"
