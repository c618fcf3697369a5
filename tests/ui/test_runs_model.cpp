// The runs list: its throughput column is training throughput (summary.train_samples_per_s, never
// the older steps + evaluation samples_per_s), and a run measured under CPU contention is marked
// and gives no speedup against the baseline (nor does a contended baseline).
#include <QFont>
#include <QDir>
#include <QtTest/QtTest>

#include "runs/run.h"
#include "runs/runs_model.h"
#include "ui_test_util.h"
#include "wb/proto/config_json.h"

using nlohmann::json;
using namespace wb::ui;
namespace t = wb::ui::test;

namespace {

const json kRemove = json(json::value_t::discarded);

// Evaluations at t = 5 and 10 reaching `acc`.
QByteArray evalsReaching(double acc, double t1 = 5.0, double t2 = 10.0) {
  return t::line(t::event("eval", {{"epoch", 1}, {"step", 20}, {"t", t1}, {"val_acc", acc - 0.1}, {"eval_ms", 100}})) +
         t::line(t::event("eval", {{"epoch", 2}, {"step", 40}, {"t", t2}, {"val_acc", acc}, {"eval_ms", 100}}));
}

// A run folder with the given config changes and status, loaded as the history loads it.
Run* runWith(const QTemporaryDir& root, const QString& id, const json& configPatch, const QString& status,
             const QByteArray& events, RunsModel& model, const json& summaryFields = json::object()) {
  const QString dir = t::writeRunDir(root.path(), id, QStringLiteral("exp"), events, status, summaryFields);
  json config = wb::proto::configToJson(wb::Config{});
  config["name"] = "exp";
  config.merge_patch(configPatch);
  t::writeFile(dir + QStringLiteral("/config.json"), QByteArray::fromStdString(config.dump(2)));
  Run* run = Run::fromDirectory(dir);
  model.addRun(run, false);
  return run;
}

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
    Run* base = runWith(root, QStringLiteral("base"), json::object(), QStringLiteral("ok"), evalsReaching(0.8), model);
    Run* fast = runWith(root, QStringLiteral("fast"), {{"speedups", {{"workers", 2}}}}, QStringLiteral("ok"), evalsReaching(0.8), model,
                        {{"train_samples_per_s", 2500.0}, {"samples_per_s", 100.0}});
    model.setBaseline(base);
    // One run each: the multiplier says so, and is not bold.
    QCOMPARE(cell(model, fast, RunsModel::ColSpeedupThroughput).toString(), QStringLiteral("2.50× 1 run"));
    QVERIFY(!cell(model, fast, RunsModel::ColSpeedupThroughput, Qt::FontRole).value<QFont>().bold());
    QVERIFY(cell(model, fast, RunsModel::ColName, Qt::DecorationRole).isNull());
  }

  // Repeats of one configuration are grouped: an interval and a verdict by the product's rule,
  // said in words (never bold here). A repeat of the baseline is never a speedup. The smallest
  // effect that counts (the Compare tab's setting) moves the verdict.
  void repeatsGiveAVerdict() {
    // (setUpEnvironment: no stored noise: the repeats alone carry it)
    auto root = t::scratchRoot();
    RunsModel model;
    Run* base = runWith(root, QStringLiteral("b1"), json::object(), QStringLiteral("ok"), evalsReaching(0.8), model);
    Run* again = runWith(root, QStringLiteral("b2"), json::object(), QStringLiteral("ok"), evalsReaching(0.8), model,
                         {{"train_samples_per_s", 1020.0}});
    runWith(root, QStringLiteral("b3"), json::object(), QStringLiteral("ok"), evalsReaching(0.8), model, {{"train_samples_per_s", 980.0}});
    QList<Run*> fast, same;
    for (double rate : {3000.0, 3060.0, 2940.0})
      fast << runWith(root, QStringLiteral("w%1").arg(rate), {{"speedups", {{"workers", 2}}}}, QStringLiteral("ok"), evalsReaching(0.8),
                      model, {{"train_samples_per_s", rate}});
    for (double rate : {1010.0, 990.0, 1000.0})
      same << runWith(root, QStringLiteral("p%1").arg(rate), {{"speedups", {{"pin_memory", true}}}}, QStringLiteral("ok"),
                      evalsReaching(0.8), model, {{"train_samples_per_s", rate}});
    model.setBaseline(base);
    const QString faster = cell(model, fast[0], RunsModel::ColSpeedupThroughput).toString();
    QVERIFY2(faster.endsWith(QStringLiteral("× faster")), qPrintable(faster));
    const QString tip = cell(model, fast[0], RunsModel::ColSpeedupThroughput, Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("faster")) && tip.contains(QStringLiteral("[")) && tip.contains(QStringLiteral("not measured")),
             qPrintable(tip));
    const QString noise = cell(model, same[0], RunsModel::ColSpeedupThroughput).toString();
    QVERIFY2(noise.endsWith(QStringLiteral("× noise")), qPrintable(noise));
    QVERIFY(!cell(model, same[0], RunsModel::ColSpeedupThroughput, Qt::FontRole).value<QFont>().bold());
    QCOMPARE(cell(model, again, RunsModel::ColSpeedupThroughput).toString(), QStringLiteral("repeat"));
    // A 3× effect is below a 250 % smallest effect: within noise, then faster again at 2 %.
    model.setMinEffect(2.5);
    QVERIFY2(cell(model, fast[0], RunsModel::ColSpeedupThroughput).toString().endsWith(QStringLiteral("× noise")),
             qPrintable(cell(model, fast[0], RunsModel::ColSpeedupThroughput).toString()));
    model.setMinEffect(0.02);
    QVERIFY(cell(model, fast[0], RunsModel::ColSpeedupThroughput).toString().endsWith(QStringLiteral("× faster")));
  }

  // A run cancelled before its first step wrote 0 train samples/s: the list shows no figure.
  void aZeroThroughputIsNoFigure() {
    auto root = t::scratchRoot();
    RunsModel model;
    Run* cut = runWith(root, QStringLiteral("cut"), json::object(), QStringLiteral("cancelled"), QByteArray(), model,
                       {{"train_samples_per_s", 0.0}});
    QVERIFY(!std::isfinite(cut->trainSamplesPerSecond()));
    QCOMPARE(cell(model, cut, RunsModel::ColThroughput).toString(), QString());
  }

  // One word, one meaning: two columns, each named for what it measures.
  void twoSpeedupsEachNamed() {
    auto root = t::scratchRoot();
    RunsModel model;
    Run* base = runWith(root, QStringLiteral("20261201-100000-exp-0001"), json::object(), QStringLiteral("ok"), evalsReaching(0.8), model);
    // Trains 2× faster but reaches the baseline's 80 % at t = 8 (the baseline at t = 10).
    Run* fast = runWith(root, QStringLiteral("20261201-101000-exp-0002"), {{"speedups", {{"workers", 2}}}}, QStringLiteral("ok"),
                        evalsReaching(0.8, 4.0, 8.0), model, {{"train_samples_per_s", 2000.0}});
    model.setBaseline(base);
    model.setShown(fast, true);
    QCOMPARE(model.headerData(RunsModel::ColSpeedupThroughput, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("× throughput"));
    QCOMPARE(model.headerData(RunsModel::ColSpeedupTarget, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("× to target"));
    QCOMPARE(cell(model, fast, RunsModel::ColSpeedupThroughput).toString(), QStringLiteral("2.00× 1 run"));
    QCOMPARE(cell(model, fast, RunsModel::ColSpeedupTarget).toString(), QStringLiteral("1.25× 1 run"));
    QVERIFY(cell(model, fast, RunsModel::ColSpeedupTarget, Qt::ToolTipRole).toString().contains(QStringLiteral("best val acc")));
    QCOMPARE(cell(model, base, RunsModel::ColSpeedupTarget).toString(), QStringLiteral("baseline"));
  }

  // A run that did not finish (or against a baseline that did not) gets no speedup.
  void unfinishedRunsGetNoSpeedup_data() {
    QTest::addColumn<QString>("status");  // "" = no summary (incomplete)
    QTest::addColumn<bool>("baselineToo");
    QTest::newRow("cancelled at 43 %") << "cancelled" << false;
    QTest::newRow("failed") << "failed" << false;
    QTest::newRow("incomplete") << "" << false;
    QTest::newRow("the baseline cancelled") << "cancelled" << true;
  }
  void unfinishedRunsGetNoSpeedup() {
    QFETCH(QString, status);
    QFETCH(bool, baselineToo);
    auto root = t::scratchRoot();
    RunsModel model;
    Run* base = runWith(root, QStringLiteral("base"), json::object(), baselineToo ? status : QStringLiteral("ok"), evalsReaching(0.8), model);
    Run* run = runWith(root, QStringLiteral("run"), {{"speedups", {{"precision", "bf16-mixed"}}}}, baselineToo ? QStringLiteral("ok") : status,
                       evalsReaching(0.8, 4.0, 8.0), model, {{"train_samples_per_s", 1010.0}});
    model.setBaseline(base);
    model.setShown(run, true);
    for (int col : {int(RunsModel::ColSpeedupThroughput), int(RunsModel::ColSpeedupTarget)}) {
      // A word for why (the run's status, or the baseline's), the reason in the tooltip.
      const QString word = baselineToo ? QStringLiteral("–") : status.isEmpty() ? QStringLiteral("incomplete") : status;
      QCOMPARE(cell(model, run, col).toString(), word);
      const QString tip = cell(model, run, col, Qt::ToolTipRole).toString();
      const QString why = baselineToo ? QStringLiteral("the baseline") : status.isEmpty() ? QStringLiteral("without a summary") : status;
      QVERIFY2(tip.startsWith(QStringLiteral("No speedup: ")) && tip.contains(why), qPrintable(tip));
    }
    QVERIFY(std::isnan(model.speedupVsBaseline(run)));
    QVERIFY(std::isnan(model.speedupToTarget(run)));
  }

  // A run is named by what it changed against the baseline; a name the user gave wins; runs
  // that would read alike carry their start time.
  void runsAreNamedByWhatTheyChanged() {
    auto root = t::scratchRoot();
    RunsModel model;
    Run* base = runWith(root, QStringLiteral("20261201-100000-exp-0001"), json::object(), QStringLiteral("ok"), evalsReaching(0.8), model);
    Run* bf16 = runWith(root, QStringLiteral("20261201-101000-exp-0002"), {{"speedups", {{"precision", "bf16-mixed"}}}},
                        QStringLiteral("ok"), evalsReaching(0.8), model);
    Run* png = runWith(root, QStringLiteral("20261201-102000-exp-0003"), {{"data", {{"dataset", "folder:/tmp/fmnist/png"}}}},
                       QStringLiteral("ok"), evalsReaching(0.8), model);
    Run* again1 = runWith(root, QStringLiteral("20261201-103000-exp-0004"), json::object(), QStringLiteral("ok"), evalsReaching(0.8), model);
    Run* again2 = runWith(root, QStringLiteral("20261201-104500-exp-0005"), json::object(), QStringLiteral("ok"), evalsReaching(0.8), model);
    model.setBaseline(base);
    QCOMPARE(cell(model, bf16, RunsModel::ColName).toString(), QStringLiteral("+ bf16"));
    QCOMPARE(cell(model, png, RunsModel::ColName).toString(), QStringLiteral("folder png"));
    QCOMPARE(cell(model, again1, RunsModel::ColName).toString(), QStringLiteral("same as baseline · 10:30:00"));
    QCOMPARE(cell(model, again2, RunsModel::ColName).toString(), QStringLiteral("same as baseline · 10:45:00"));
    QCOMPARE(cell(model, base, RunsModel::ColName).toString(), QStringLiteral("exp"));
    // The whole story in the tooltip: the experiment's name and the folder.
    const QString tip = cell(model, bf16, RunsModel::ColName, Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("exp")) && tip.contains(bf16->runDir()), qPrintable(tip));
    // Another baseline: the names follow it.
    model.setBaseline(bf16);
    // (the two repeats read alike with it: each carries its start time)
    QCOMPARE(cell(model, base, RunsModel::ColName).toString(), QStringLiteral("fp32 · 10:00:00"));
    QCOMPARE(cell(model, again1, RunsModel::ColName).toString(), QStringLiteral("fp32 · 10:30:00"));
    bf16->setName(QStringLiteral("my bf16 try"));
    model.setBaseline(base);
    QCOMPARE(cell(model, bf16, RunsModel::ColName).toString(), QStringLiteral("my bf16 try"));
    // An experiment's runs (a ladder's folders) carry their folder's name, not a time read from
    // it ("05-early-stopping-p1-baseline" read "st:op:pi").
    Run* p1 = runWith(root, QStringLiteral("05-early-stopping-p1-baseline"), json::object(), QStringLiteral("ok"),
                      evalsReaching(0.8), model);
    QCOMPARE(cell(model, p1, RunsModel::ColName).toString(), QStringLiteral("same as baseline · 05-early-stopping-p1-baseline"));
    // Two such folders: only what tells them apart, in whole words (a 1024-px list shows it).
    Run* p2 = runWith(root, QStringLiteral("05-early-stopping-p2-baseline"), json::object(), QStringLiteral("ok"),
                      evalsReaching(0.8), model);
    QCOMPARE(cell(model, p1, RunsModel::ColName).toString(), QStringLiteral("same as baseline · p1"));
    QCOMPARE(cell(model, p2, RunsModel::ColName).toString(), QStringLiteral("same as baseline · p2"));
    QCOMPARE(cell(model, again2, RunsModel::ColName).toString(), QStringLiteral("same as baseline · 10:45:00"));
  }

  // The runs opened from an experiment's folder (a search's trials) are named by what sets them
  // apart, not by the shortened training they all share.
  void anExperimentsRunsAreNamedApart() {
    auto root = t::scratchRoot();
    RunsModel model;
    Run* base = runWith(root, QStringLiteral("20261201-100000-exp-0001"), json::object(), QStringLiteral("ok"), evalsReaching(0.8), model);
    QDir(root.path()).mkpath(QStringLiteral("search/trials"));
    t::writeFile(root.path() + QStringLiteral("/search/tune.json"), "{}");  // the folder holds a search's record
    const json trial = {{"data", {{"limit_val", 512}}}, {"train", {{"log_every", 7}}}};
    json workers = trial, batch = trial;
    workers["speedups"]["workers"] = 2;
    batch["train"]["batch_size"] = 256;
    Run* w = runWith(root, QStringLiteral("search/trials/c01-r0"), workers, QStringLiteral("ok"), evalsReaching(0.8), model);
    Run* b = runWith(root, QStringLiteral("search/trials/c02-r0"), batch, QStringLiteral("ok"), evalsReaching(0.8), model);
    Run* alone = runWith(root, QStringLiteral("20261201-101000-exp-0002"), workers, QStringLiteral("ok"), evalsReaching(0.8), model);
    model.setBaseline(base);
    QCOMPARE(cell(model, w, RunsModel::ColName).toString(), QStringLiteral("workers 2"));
    QCOMPARE(cell(model, b, RunsModel::ColName).toString(), QStringLiteral("batch 256"));
    // A run of its own is named against the baseline alone, as before.
    QVERIFY2(cell(model, alone, RunsModel::ColName).toString().contains(QStringLiteral("512 val images")),
             qPrintable(cell(model, alone, RunsModel::ColName).toString()));
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
    QCOMPARE(cell(model, run, RunsModel::ColSpeedupThroughput).toString(), QStringLiteral("contended"));
    QCOMPARE(cell(model, run, RunsModel::ColSpeedupTarget).toString(), QStringLiteral("contended"));
    QVERIFY(std::isnan(model.speedupVsBaseline(run)));
    const QString why = cell(model, run, RunsModel::ColSpeedupThroughput, Qt::ToolTipRole).toString();
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
