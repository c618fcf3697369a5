// Real runs from the window, through workbench-cli: a small Fashion-MNIST run puts points on the
// loss plot and ends ok (and becomes the baseline); a launcher killed from outside shows the run
// as failed with its error, and the window stays usable.
#include <QAction>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableWidget>
#include <QPushButton>
#include <QtTest/QtTest>

#include <csignal>

#include "compare/compare_view.h"
#include "compare/experiment_view.h"
#include "compare/experiment_runner.h"
#include "compare/speedup_chart.h"
#include "compare/tune_view.h"
#include "plots/live_plots.h"
#include "runs/run.h"
#include "runs/run_history.h"
#include "runs/run_process.h"
#include "runs/run_queue.h"
#include "runs/runs_model.h"
#include "setup/setup_panel.h"
#include "setup/speedups_group.h"
#include "ui_test_util.h"
#include "window/main_window.h"
#include "window/runs_panel.h"

#include "../support/machine.h"

using nlohmann::json;
using namespace wb::ui;
namespace t = wb::ui::test;

namespace {

using t::smallExperiment;

}  // namespace

class TestWindowRuns : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { t::setUpEnvironment(); }

  void realRunFromTheWindowEndsOk() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.setup()->setConfigJson(smallExperiment("window-run"));
    QVERIFY(w.setup()->isValid());
    Run* run = w.runExperiment();
    QVERIFY(run);
    QVERIFY(w.runs()->isShown(run));
    w.plots()->showTab(QStringLiteral("loss"));
    QTRY_VERIFY_WITH_TIMEOUT(isFinal(run->status()), 240000);
    QVERIFY2(run->status() == RunStatus::Ok,
             qPrintable(statusWord(run->status()) + QStringLiteral(": ") + run->errorMessage() + QLatin1Char('\n') + run->logTail()));
    QVERIFY(!run->series().steps().empty());
    QTRY_VERIFY(w.plots()->pointCount(QStringLiteral("loss")) > 0);
    QVERIFY(std::isfinite(run->bestValAcc()));
    QVERIFY(QFileInfo::exists(run->runDir() + QStringLiteral("/summary.json")));
    QVERIFY(run->runDir().startsWith(root.path()));
    // The first run that ends ok becomes the baseline.
    QTRY_COMPARE_WITH_TIMEOUT(w.runs()->baseline(), run, 30000);  // once the process has ended
    // The history scan does not list the window's own run twice.
    w.history()->rescan();
    QCOMPARE(w.runs()->rowCount(), 1);
  }

  // Run ladder from the window: its rungs stay out of the runs list and the plots while it runs
  // (the Ladder tab shows the plan with the step running), the ladder opens when it ends, leading
  // with its answer; closed back to the list, double-clicking it lists its runs as a group; a
  // window opened later lists it from the runs folder.
  void aLadderShowsItsRungsAsTheyRun() {
    WB_NEED(wb::test::missingFashionMnist());
    auto root = t::scratchRoot();
    json tiny = smallExperiment("ladder-base");
    tiny["model"]["name"] = "mlp";
    tiny["data"]["limit_train"] = 256;
    tiny["data"]["limit_val"] = 128;
    tiny["train"]["threads"] = 1;
    const QString baseDir = t::writeRunDir(root.path(), QStringLiteral("20261201-100000-ladder-base-0001"), QStringLiteral("ladder-base"),
                                           t::line(t::stepEvent(5, 1.0)), QStringLiteral("ok"));
    QVERIFY(t::writeFile(baseDir + QStringLiteral("/config.json"), QByteArray::fromStdString(tiny.dump(2))));
    MainWindow w(t::windowOptions(root));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    Run* base = w.runs()->findByDir(baseDir);
    QVERIFY(base);
    w.runs()->setBaseline(base);
    auto* ladderTable = w.experiments()->findChild<QTableWidget*>(QStringLiteral("ladderTable"));
    QVERIFY(ladderTable);
    ExperimentRunner* runner = w.experiments()->ladderRunner();
    QStringList rungDirs, statusAtStart;
    connect(runner, &ExperimentRunner::rungStarted, this, [&](int index, int, const QString&, const QString& dir) {
      if (!dir.isEmpty()) rungDirs << dir;  // a step measured by parts has no run folder of its own
      const QTableWidgetItem* status = ladderTable->item(index, 2);
      statusAtStart << (status ? status->text() : QString());
    });
    QSignalSpy finished(runner, &ExperimentRunner::finished);
    w.experiments()->runLadder();
    QVERIFY(runner->isRunning());
    QTRY_VERIFY_WITH_TIMEOUT(!statusAtStart.isEmpty(), 120000);
    QCOMPARE(statusAtStart.first(), QStringLiteral("running"));
    QTRY_VERIFY_WITH_TIMEOUT(!rungDirs.isEmpty(), 600000);  // the first step measured by pairs
    QVERIFY2(w.experiments()->answerText().startsWith(QStringLiteral("Ladder running")), qPrintable(w.experiments()->answerText()));
    // The rung stays out of the list and the plots while the ladder goes on.
    QTest::qWait(1500);
    QVERIFY(!w.runs()->findByDir(rungDirs.first()));
    QVERIFY(finished.count() == 1 || finished.wait(900000));
    QVERIFY2(finished.first().at(2).toString().isEmpty(), qPrintable(finished.first().at(2).toString()));
    const QString out = finished.first().at(0).toString();
    QVERIFY2(out.startsWith(root.path()), qPrintable(out));  // into the runs folder the window shows
    QVERIFY(rungDirs.size() >= 2);
    for (const QString& dir : rungDirs) QVERIFY(!w.runs()->findByDir(dir));
    QVERIFY(!w.experiments()->answerText().startsWith(QStringLiteral("Ladder running")));
    // Closed back to the list, the ladder double-clicked lists its runs as a group.
    auto* back = w.experiments()->findChild<QPushButton*>(QStringLiteral("experimentBack"));
    QVERIFY(back && !back->isHidden());
    back->click();
    QCOMPARE(ladderTable->item(0, 0)->data(Qt::UserRole).toString(), out);
    Q_EMIT ladderTable->cellDoubleClicked(0, 0);
    for (const QString& dir : rungDirs) QTRY_VERIFY_WITH_TIMEOUT(w.runs()->findByDir(dir) != nullptr, 20000);
    QVERIFY(!w.runsPanel()->experimentOf(w.runs()->findByDir(rungDirs.first())).isEmpty());
    w.runsPanel()->showExperimentOf(w.runs()->findByDir(rungDirs.first()));
    for (const QString& dir : rungDirs) QVERIFY(w.runs()->isShown(w.runs()->findByDir(dir)));
    w.runsPanel()->hideAll();
    QVERIFY(w.runs()->shownRuns().isEmpty());
    QVERIFY(!w.experiments()->chart()->bars().bars.empty());  // the ladder, on the Experiments tab
    // The speedup rows say what it measured at once (not "Not measured…" until the next run).
    auto ladderLines = [&w] {
      int n = 0;
      for (const QString& key : wb::ui::SpeedupsGroup::keys())
        n += w.setup()->speedups()->effectText(key).contains(QStringLiteral("Ladder"));
      return n;
    };
    QVERIFY(ladderLines() >= 1);
    // After a restart, the Ladder tab lists it.
    MainWindow again(t::windowOptions(root));
    QCOMPARE(again.experiments()->laddersOnDisk().value(0), out);
    auto* listed = again.experiments()->findChild<QTableWidget*>(QStringLiteral("ladderTable"));
    QCOMPARE(listed->item(0, 0)->data(Qt::UserRole).toString(), out);
  }

  // After a restart every experiment in the runs folder is listed, tries and searches with the
  // ladders, and a try's or a search's runs (at any depth of its folder) open as a group: listed,
  // and the only ones on the plots besides the baseline.
  void everyExperimentCanBeFoundAgain() {
    auto root = t::scratchRoot();
    const QString own = t::writeRunDir(root.path(), QStringLiteral("20261201-090000-own"), QStringLiteral("own"), QByteArray(), QStringLiteral("ok"));
    const QString tryDir = root.filePath(QStringLiteral("20261201-100000-try-workers"));
    const QString tuneDir = root.filePath(QStringLiteral("20261201-110000-tune"));
    QDir().mkpath(tryDir);
    QDir().mkpath(tuneDir + QStringLiteral("/finals/c1"));
    QVERIFY(t::writeFile(tryDir + QStringLiteral("/try.json"), "{}"));
    QVERIFY(t::writeFile(tuneDir + QStringLiteral("/tune.json"), "{}"));
    QStringList tryRuns{t::writeRunDir(tryDir, QStringLiteral("pair-1-baseline"), QStringLiteral("base"), QByteArray(), QStringLiteral("ok")),
                        t::writeRunDir(tryDir, QStringLiteral("pair-1-variant"), QStringLiteral("base + workers 2"), QByteArray(), QStringLiteral("ok"))};
    const QString finalRun = t::writeRunDir(tuneDir + QStringLiteral("/finals/c1"), QStringLiteral("pair-1-variant"), QStringLiteral("c1"),
                                            QByteArray(), QStringLiteral("ok"));
    MainWindow w(t::windowOptions(root));
    const auto found = w.experiments()->experimentsOnDisk();
    QStringList kinds;
    for (const auto& [dir, kind] : found) kinds << QFileInfo(dir).fileName() + QLatin1Char(':') + kind;
    QVERIFY2(kinds.contains(QStringLiteral("20261201-100000-try-workers:try")), qPrintable(kinds.join(QLatin1Char(' '))));
    QVERIFY2(kinds.contains(QStringLiteral("20261201-110000-tune:search")), qPrintable(kinds.join(QLatin1Char(' '))));
    Run* ownRun = w.runs()->findByDir(own);
    QVERIFY(ownRun);
    w.runs()->setShown(ownRun, true);

    QCOMPARE(w.openExperimentRuns(tryDir), 2);
    for (const QString& dir : tryRuns) QVERIFY(w.runs()->isShown(w.runs()->findByDir(dir)));
    QVERIFY(!w.runs()->isShown(ownRun));
    QCOMPARE(w.openExperimentRuns(tuneDir), 1);
    QVERIFY(w.runs()->isShown(w.runs()->findByDir(finalRun)));
    QVERIFY(!w.runs()->isShown(w.runs()->findByDir(tryRuns.first())));
    // The runs list groups them by their experiment's folder.
    QCOMPARE(w.runsPanel()->experimentOf(w.runs()->findByDir(finalRun)), tuneDir);
  }

  // An experiment opened draws its answer, not its dozens of runs: a search's finalists (not its
  // trials), a try's runs to the target (not its short trials), and never more than ten at once;
  // every run is listed either way and the status bar says what is drawn.
  void anOpenedExperimentDrawsItsAnswer() {
    auto root = t::scratchRoot();
    const QString tuneDir = root.filePath(QStringLiteral("20261201-110000-tune"));
    const QString tryDir = root.filePath(QStringLiteral("20261201-120000-try"));
    QVERIFY(QDir().mkpath(tuneDir + QStringLiteral("/trials")) && QDir().mkpath(tuneDir + QStringLiteral("/finals/c1")));
    QVERIFY(QDir().mkpath(tryDir + QStringLiteral("/trials/runs")) && QDir().mkpath(tryDir + QStringLiteral("/runs")));
    QVERIFY(t::writeFile(tuneDir + QStringLiteral("/tune.json"), "{}") && t::writeFile(tryDir + QStringLiteral("/try.json"), "{}"));
    QStringList trials, finals, cut, toTarget;
    for (int i = 0; i < 12; ++i) {
      const QString n = QString::number(i);
      trials << t::writeRunDir(tuneDir + QStringLiteral("/trials"), QStringLiteral("c") + n, QStringLiteral("c") + n, QByteArray(), QStringLiteral("ok"));
      cut << t::writeRunDir(tryDir + QStringLiteral("/trials/runs"), QStringLiteral("p") + n, QStringLiteral("p") + n, QByteArray(), QStringLiteral("ok"));
      toTarget << t::writeRunDirWith(tryDir + QStringLiteral("/runs"), QStringLiteral("variant-seed-") + n, QStringLiteral("v") + n,
                                     {{"train", {{"stop_at_accuracy", 0.7}}}}, QByteArray(), QStringLiteral("ok"));
    }
    for (const char* id : {"pair-1-baseline", "pair-1-variant"})
      finals << t::writeRunDir(tuneDir + QStringLiteral("/finals/c1"), QString::fromLatin1(id), QString::fromLatin1(id), QByteArray(), QStringLiteral("ok"));
    MainWindow w(t::windowOptions(root));
    auto shown = [&w](const QStringList& dirs) {
      int n = 0;
      for (const QString& d : dirs) n += w.runs()->findByDir(d) && w.runs()->isShown(w.runs()->findByDir(d));
      return n;
    };
    QCOMPARE(w.openExperimentRuns(tuneDir), 14);
    QCOMPARE(shown(finals), 2);
    QCOMPARE(shown(trials), 0);
    QCOMPARE(w.openExperimentRuns(tryDir), 24);
    QCOMPARE(shown(toTarget), 10);
    QCOMPARE(shown(cut) + shown(finals), 0);
    QVERIFY2(w.statusBar()->toolTip().contains(QStringLiteral("10 on the plots")), qPrintable(w.statusBar()->toolTip()));
    for (const QString& d : trials + cut + toTarget) QVERIFY2(w.runs()->findByDir(d), qPrintable(d));  // every run listed
    // Double-clicking the search in the Ladder tab's list opens its answer on the Fastest tab too.
    auto* list = w.experiments()->findChild<QTableWidget*>(QStringLiteral("ladderTable"));
    QVERIFY(list);
    for (int r = 0; r < list->rowCount(); ++r)
      if (list->item(r, 1) && list->item(r, 1)->text() == QLatin1String("search")) Q_EMIT list->cellDoubleClicked(r, 0);
    QCOMPARE(w.experiments()->tuneView()->dir(), tuneDir);
    QCOMPARE(shown(finals), 2);
  }

  // The details pane shows a run's warnings before its log tail: the tail scrolls, the warnings
  // must not be below the fold.
  void detailsShowWarningsBeforeTheLogTail() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    auto* run = new Run(Run::Origin::Launched);
    run->setName(QStringLiteral("noisy"));
    run->ingest(std::vector<json>{t::startEvent(10, "cpu"), t::event("warning", {{"message", "3 unreadable images skipped"}})});
    QStringList lines;
    for (int i = 0; i < 40; ++i) lines << QStringLiteral("log line %1").arg(i);
    run->appendLogTail(lines.join(QLatin1Char('\n')));
    w.runs()->addRun(run);
    w.runsPanel()->selectRun(run);
    auto* details = w.findChild<QPlainTextEdit*>(QStringLiteral("runDetails"));
    QTRY_VERIFY(details->toPlainText().contains(QStringLiteral("3 unreadable images skipped")));
    const QString text = details->toPlainText();
    QVERIFY2(text.indexOf(QStringLiteral("Warnings:")) < text.indexOf(QStringLiteral("Log tail:")), qPrintable(text));
  }

  void killedLauncherShowsFailedAndWindowStaysUsable() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    w.show();
    w.setup()->setConfigJson(smallExperiment("to-be-killed"));
    Run* run = w.runExperiment();
    QVERIFY(run);
    RunProcess* proc = w.queue()->processFor(run);
    QVERIFY(proc);
    // Killed once it is really running (its first event came), not while it starts.
    QTRY_VERIFY_WITH_TIMEOUT(run->status() == RunStatus::Running || isFinal(run->status()), 60000);
    QVERIFY(::kill(pid_t(proc->processId()), SIGKILL) == 0);
    QTRY_COMPARE_WITH_TIMEOUT(run->status(), RunStatus::Failed, 30000);
    QVERIFY2(run->errorMessage().contains(QStringLiteral("killed by signal 9")), qPrintable(run->errorMessage()));
    QVERIFY(!w.queue()->isBusy());

    // The list shows it failed, the details pane says why, and the window takes the next run.
    w.runsPanel()->selectRun(run);
    const int row = w.runs()->rowOf(run);
    QCOMPARE(w.runs()->index(row, RunsModel::ColStatus).data().toString(), QStringLiteral("failed"));
    auto* details = w.findChild<QPlainTextEdit*>(QStringLiteral("runDetails"));
    QTRY_VERIFY(details->toPlainText().contains(QStringLiteral("killed by signal 9")));
    // Right under its name, not below the pane's fold.
    QVERIFY2(details->toPlainText().section(QLatin1Char('\n'), 1, 1).startsWith(QStringLiteral("Error: ")), qPrintable(details->toPlainText()));
    QVERIFY(w.runAction()->isEnabled());
    // The next run, against it as the baseline with bf16: the status bar names it as the list
    // does ("+ bf16"), not by its config's name.
    w.runs()->setBaseline(run);
    json bf16 = smallExperiment("to-be-killed");
    bf16["speedups"]["precision"] = "bf16-mixed";
    w.setup()->setConfigJson(bf16);
    Run* next = w.runExperiment();
    QVERIFY(next && next != run);
    QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("+ bf16")), qPrintable(w.statusBar()->currentMessage()));
    QTRY_VERIFY_WITH_TIMEOUT(isActive(next->status()) || isFinal(next->status()), 30000);
    w.queue()->stopAll();
    QTRY_VERIFY_WITH_TIMEOUT(!w.queue()->isBusy(), 90000);
    QVERIFY(isFinal(next->status()));
  }
};

QTEST_MAIN(TestWindowRuns)
#include "test_window_runs.moc"
