// The window's ladder runner: a real `workbench-cli ladder --events-stdout` (the CLI this build
// made) on a tiny Fashion-MNIST budget. It learns the output folder and each rung from the
// ladder's events, ends in exactly one finished() (succeeded, cancelled or failed, with the
// reason in words), and the Compare tab opens the ladder it wrote. Its Run ladder passes the
// set-up's optim.lr_scaling as --lr-scaling, and the ladder plans the devices step with it.
#include <QDir>
#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QtTest/QtTest>

#include "../support/machine.h"

#include <algorithm>

#include "wb/common/speedups.h"
#include "compare/compare_view.h"
#include "compare/experiment_view.h"
#include "compare/experiment_runner.h"
#include "compare/speedup_chart.h"
#include "runs/run.h"
#include "runs/runs_model.h"
#include "ui_test_util.h"
#include "wb/common/paths.h"

using nlohmann::json;
using namespace wb::ui;
namespace t = wb::ui::test;

namespace {

// Baseline and the workers step on 256 training images, one pair: two short runs.
QStringList tinyLadder(const QString& out) {
  QStringList args{QStringLiteral("--out"), out, QStringLiteral("--steps"), QStringLiteral("workers"),
                   QStringLiteral("--repeats"), QStringLiteral("1")};
  for (const char* kv : {"model.name=mlp", "data.limit_train=256", "data.limit_val=128", "train.epochs=1",
                         "train.log_every=2", "train.threads=1"})
    args << QStringLiteral("--set") << QString::fromLatin1(kv);
  return args;
}

}  // namespace

class TestExperimentRunner : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    t::setUpEnvironment();
    WB_NEED(wb::test::missingFashionMnist());
  }

  void runsToTheEndFromItsEvents() {
    auto root = t::scratchRoot();
    const QString out = root.filePath(QStringLiteral("ladder"));
    ExperimentRunner runner;
    QSignalSpy progress(&runner, &ExperimentRunner::progress);
    QSignalSpy finished(&runner, &ExperimentRunner::finished);
    QList<int> done;  // steps done as each run starts: never backwards
    connect(&runner, &ExperimentRunner::rungStarted, this, [&] { done << runner.stepsDone(); });
    runner.start(t::cliPath(), tinyLadder(out));
    QVERIFY(runner.isRunning());
    QVERIFY(finished.wait(240000));
    QVERIFY(!done.isEmpty());
    for (int i = 1; i < done.size(); ++i) QVERIFY(done[i] >= done[i - 1]);
    QCOMPARE(runner.stepsDone(), runner.stepsPlanned());  // every step done: 9/9 (the recipe's 8 and the kept one)
    QVERIFY2(runner.progressText().startsWith(QStringLiteral("%1/%1 steps done").arg(runner.stepsPlanned())),
             qPrintable(runner.progressText()));
    QTest::qWait(100);
    QCOMPARE(finished.size(), 1);
    const auto args = finished.takeFirst();
    QCOMPARE(args.at(0).toString(), out);
    QCOMPARE(args.at(1).toBool(), false);
    QVERIFY2(args.at(2).toString().isEmpty(), qPrintable(args.at(2).toString()));
    QVERIFY(!runner.isRunning());
    QCOMPARE(runner.outDir(), out);
    // Both steps ended ok (a run measured under contention is run once more: CI runs tests side by side).
    const QStringList ended = runner.rungsEnded();
    QVERIFY2(ended.size() >= 2 && ended[0] == QStringLiteral("baseline: ok") && ended[1] == QStringLiteral("workers: ok"),
             qPrintable(ended.join(QLatin1Char('\n'))));
    for (const QString& e : ended) QVERIFY2(e.endsWith(QStringLiteral(": ok")), qPrintable(e));
    QStringList lines;
    for (const auto& p : progress) lines << p.at(0).toString();
    QVERIFY2(std::any_of(lines.begin(), lines.end(),
                         [](const QString& l) {
                           // step 1 (after the baseline's step 0), as the ladder's table numbers it
                           return l.startsWith(QStringLiteral("step 1: loader workers 0 → "));
                         }),
             qPrintable(lines.join(QLatin1Char('\n'))));

    // What it wrote opens in the Experiments tab: the baseline and the workers bar.
    RunsModel model;
    ExperimentView view(&model);
    QString error;
    QVERIFY2(view.openLadder(out, &error), qPrintable(error));
    QVERIFY(view.chart()->bars().bars.size() >= 2);
    QVERIFY(QFileInfo(QDir(out).filePath(QStringLiteral("ladder.png"))).size() > 0);
    t::grabIfAsked(view, QStringLiteral("ladder-run"));
    if (qEnvironmentVariableIsSet("WB_GRAB_DIR"))  // the PNG the ladder rendered from its SVG, to look at
      QFile::copy(QDir(out).filePath(QStringLiteral("ladder.png")), qEnvironmentVariable("WB_GRAB_DIR") + QStringLiteral("/ladder-png.png"));
  }

  // A step by parts is one rung without a run folder: it counts as done when its rung ends, not
  // only at the ladder's end.
  void aStepByPartsCountsAsDoneWhenItEnds() {
    auto root = t::scratchRoot();
    QStringList args = tinyLadder(root.filePath(QStringLiteral("ladder")));
    args.removeAt(args.indexOf(QStringLiteral("--repeats")) + 1);
    args.removeAll(QStringLiteral("--repeats"));
    args << QStringLiteral("--references") << root.filePath(QStringLiteral("refs"));
    ExperimentRunner runner;
    QSignalSpy finished(&runner, &ExperimentRunner::finished);
    int doneBeforeWorkers = -1, doneAfterWorkers = -1;
    connect(&runner, &ExperimentRunner::rungStarted, this, [&](int, int, const QString& key, const QString&) {
      if (key == QLatin1String("workers")) doneBeforeWorkers = runner.stepsDone();
    });
    connect(&runner, &ExperimentRunner::rungEnded, this, [&](int, const QString& key, const QString& dir, const QString&) {
      if (key == QLatin1String("workers") && dir.isEmpty()) doneAfterWorkers = runner.stepsDone();
    });
    runner.start(t::cliPath(), args);
    QVERIFY(finished.wait(240000));
    QVERIFY2(finished.first().at(2).toString().isEmpty(), qPrintable(finished.first().at(2).toString()));
    QVERIFY2(doneBeforeWorkers >= 0 && doneAfterWorkers == doneBeforeWorkers + 1,
             qPrintable(QStringLiteral("%1 then %2").arg(doneBeforeWorkers).arg(doneAfterWorkers)));
  }

  void cancelEndsItOnceKeepingTheTables() {
    auto root = t::scratchRoot();
    const QString out = root.filePath(QStringLiteral("ladder"));
    ExperimentRunner runner;
    QSignalSpy finished(&runner, &ExperimentRunner::finished);
    QSignalSpy progress(&runner, &ExperimentRunner::progress);
    runner.start(t::cliPath(), tinyLadder(out));
    // Once the baseline ended, stop it during the next rung.
    QTRY_VERIFY_WITH_TIMEOUT(!runner.rungsEnded().isEmpty(), 240000);
    runner.cancel();
    QVERIFY(finished.wait(120000));
    QTest::qWait(100);
    QCOMPARE(finished.size(), 1);
    const auto args = finished.takeFirst();
    QCOMPARE(args.at(1).toBool(), true);
    QVERIFY2(args.at(2).toString().isEmpty(), qPrintable(args.at(2).toString()));
    QVERIFY(QFileInfo::exists(QDir(out).filePath(QStringLiteral("ladder.json"))));  // the steps so far
  }

  void runLadderPassesTheSetUpsLrScaling() {
    auto root = t::scratchRoot();
    // A finished baseline whose config is a tiny experiment (the ladder starts it before the cancel).
    const QString dir = t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("base"), QByteArray(),
                                       QStringLiteral("ok"));
    json config = t::smallExperiment("base");
    config["model"]["name"] = "mlp";
    config["data"]["limit_train"] = 256;
    config["data"]["limit_val"] = 128;
    config["optim"]["lr_scaling"] = "none";  // the set-up's choice, not the baseline's, is what the ladder gets
    t::writeFile(dir + QStringLiteral("/config.json"), QByteArray::fromStdString(config.dump(2)));
    RunsModel model;
    Run* base = Run::fromDirectory(dir);
    model.addRun(base);
    model.setBaseline(base);
    CompareView compare(&model);
    ExperimentView view(&model);  // wired to the Compare tab as the window wires it
    view.setTargetSource([&compare] { return compare.targetArguments(); });
    view.setMinEffectSource([&compare] { return compare.minEffect(); });
    view.setLadderLrScaling([] { return QStringLiteral("linear"); });
    compare.findChild<QDoubleSpinBox*>(QStringLiteral("compareTarget"))->setValue(13.5);  // the Target set on the Compare tab
    ExperimentRunner* runner = view.ladderRunner();
    QSignalSpy finished(runner, &ExperimentRunner::finished);
    view.runLadder();
    QVERIFY(runner->isRunning());
    const QStringList args = runner->arguments();
    const int at = args.indexOf(QStringLiteral("--lr-scaling"));
    QVERIFY2(at > 0 && args.value(at + 1) == QStringLiteral("linear"), qPrintable(args.join(QLatin1Char(' '))));
    // ... and the verdicts' threshold set on the Compare tab.
    const int effect = args.indexOf(QStringLiteral("--min-effect"));
    QVERIFY2(effect > 0 && args.value(effect + 1).toDouble() == 0.02, qPrintable(args.join(QLatin1Char(' '))));
    // ... and its Target, not the ladder's own.
    const int target = args.indexOf(QStringLiteral("--target-acc"));
    QVERIFY2(target > 0 && args.value(target + 1).toDouble() == 0.135, qPrintable(args.join(QLatin1Char(' '))));
    // Find fastest takes the same.
    const QStringList tuneArgs = compare.targetArguments();
    QCOMPARE(tuneArgs, (QStringList{QStringLiteral("--target-acc"), QStringLiteral("0.135")}));
    // The ladder took it: its plan's devices step trains at the linearly scaled lr.
    QTRY_VERIFY_WITH_TIMEOUT(runner->plan().is_array() || !runner->isRunning(), 60000);
    const json plan = runner->plan();
    runner->cancel();
    QVERIFY(finished.wait(120000));
    if (!runner->outDir().isEmpty()) QDir(runner->outDir()).removeRecursively();
    QVERIFY2(plan.is_array(), "the ladder announced no plan");
    bool devices = false;
    for (const auto& step : plan) {
      if (step.value("key", "") != "devices" || step.value("skipped", false)) continue;
      devices = true;
      QVERIFY2(step.value("added", "").find("(linear \u00d7") != std::string::npos, step.dump().c_str());
    }
    if (!devices) QSKIP("this machine allows one process per run: the ladder skips its devices step");
  }

  void aBadOptionFailsInWords() {
    ExperimentRunner runner;
    QSignalSpy finished(&runner, &ExperimentRunner::finished);
    runner.start(t::cliPath(), {QStringLiteral("--repeats"), QStringLiteral("0")});
    QVERIFY(finished.wait(60000));
    QTest::qWait(100);
    QCOMPARE(finished.size(), 1);
    const auto args = finished.takeFirst();
    QVERIFY(args.at(0).toString().isEmpty());
    QCOMPARE(args.at(1).toBool(), false);
    QVERIFY2(args.at(2).toString().contains(QStringLiteral("--repeats")), qPrintable(args.at(2).toString()));
  }

  void aMissingCliFailsInWords() {
    ExperimentRunner runner;
    QSignalSpy finished(&runner, &ExperimentRunner::finished);
    runner.start(QStringLiteral("/nonexistent/workbench-cli"), {});
    QVERIFY(finished.wait(10000) || finished.size() == 1);
    QCOMPARE(finished.size(), 1);
    QVERIFY2(finished.at(0).at(2).toString().contains(QStringLiteral("Could not start")), qPrintable(finished.at(0).at(2).toString()));
  }
};

QTEST_MAIN(TestExperimentRunner)
#include "test_experiment_runner.moc"
