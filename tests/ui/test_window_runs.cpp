// Real runs from the window, through workbench-cli: a small Fashion-MNIST run puts points on the
// loss plot and ends ok (and becomes the baseline); a launcher killed from outside shows the run
// as failed with its error, and the window stays usable.
#include <QAction>
#include <QPlainTextEdit>
#include <QtTest/QtTest>

#include <csignal>

#include "plots/live_plots.h"
#include "runs/run.h"
#include "runs/run_history.h"
#include "runs/run_process.h"
#include "runs/run_queue.h"
#include "runs/runs_model.h"
#include "setup/setup_panel.h"
#include "ui_test_util.h"
#include "window/main_window.h"
#include "window/runs_panel.h"

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
    QVERIFY(w.runAction()->isEnabled());
    Run* next = w.runExperiment();
    QVERIFY(next && next != run);
    QTRY_VERIFY_WITH_TIMEOUT(isActive(next->status()) || isFinal(next->status()), 30000);
    w.queue()->stopAll();
    QTRY_VERIFY_WITH_TIMEOUT(!w.queue()->isBusy(), 90000);
    QVERIFY(isFinal(next->status()));
  }
};

QTEST_MAIN(TestWindowRuns)
#include "test_window_runs.moc"
