// The window: an invalid set-up is refused; a launcher that cannot start shows the run as failed
// with its error; drops open run folders, dataset folders and experiments; experiments save and
// open as the CLI's JSON; the last set-up comes back; the runs list's actions work on run
// directories. (Real runs from the window: test_window_runs.cpp.)
#include <QAction>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSettings>
#include <QtTest/QtTest>

#include "plots/live_plots.h"
#include "runs/run.h"
#include "runs/run_history.h"
#include "runs/run_process.h"
#include "runs/run_queue.h"
#include "runs/runs_model.h"
#include "setup/json_fields.h"
#include "setup/setup_panel.h"
#include "ui_test_util.h"
#include "window/main_window.h"
#include "window/runs_panel.h"
#include "wb/proto/rundir.h"

using nlohmann::json;
using namespace wb::ui;
namespace t = wb::ui::test;

namespace {

using t::smallExperiment;

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    t::setUpEnvironment();
    QCoreApplication::setOrganizationName(QStringLiteral("speedup-workbench-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_main_window"));
  }

  void refusesAnInvalidSetup() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    w.show();
    QVERIFY(w.runAction()->isEnabled());
    auto* lr = w.setup()->findChild<QLineEdit*>(QStringLiteral("optim.lr"));
    lr->selectAll();
    QTest::keyClicks(lr, QStringLiteral("0"));
    QVERIFY(!w.setup()->isValid());
    QVERIFY(!w.runAction()->isEnabled());
    QVERIFY(w.setup()->errorsShown().contains(QStringLiteral("optim.lr: 0 \u2014 must be > 0")));
    QVERIFY(!w.runExperiment());
    QCOMPARE(w.runs()->rowCount(), 0);
  }

  void launcherThatCannotStartFails() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    w.queue()->setCliPath(QStringLiteral("/nonexistent/workbench-cli"));
    w.setup()->setConfigJson(smallExperiment("nowhere"));
    Run* run = w.runExperiment();
    QVERIFY(run);
    QTRY_COMPARE_WITH_TIMEOUT(run->status(), RunStatus::Failed, 10000);
    QVERIFY2(run->errorMessage().startsWith(QStringLiteral("Could not start")), qPrintable(run->errorMessage()));
    QVERIFY(w.runAction()->isEnabled());
    QVERIFY(!w.queue()->isBusy());
  }

  void dropsOpenRunsDatasetsAndExperiments() {
    auto root = t::scratchRoot();
    auto other = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    const QString runDir = t::writeRunDir(other.path(), QStringLiteral("copied-from-cluster"), QStringLiteral("cluster"),
                                          t::line(t::stepEvent(1, 2.0)), QStringLiteral("ok"));
    QVERIFY(w.openPath(runDir));
    QCOMPARE(w.runs()->rowCount(), 1);
    QVERIFY(w.runs()->isShown(w.runs()->runAt(0)));

    QVERIFY(QDir().mkpath(other.filePath(QStringLiteral("idx"))));
    QVERIFY(t::writeFile(other.filePath(QStringLiteral("idx/train-images-idx3-ubyte.gz")), "x"));
    QVERIFY(w.openPath(other.filePath(QStringLiteral("idx"))));
    QCOMPARE(fieldString(w.setup()->configJson(), QStringLiteral("data.dataset")),
             QStringLiteral("idx:") + other.filePath(QStringLiteral("idx")));

    const QString exp = other.filePath(QStringLiteral("exp.json"));
    QVERIFY(t::writeFile(exp, QByteArray::fromStdString(smallExperiment("from-file").dump())));
    QVERIFY(w.openPath(exp));
    QCOMPARE(fieldString(w.setup()->configJson(), QStringLiteral("name")), QStringLiteral("from-file"));
    QVERIFY(!w.openPath(other.filePath(QStringLiteral("missing"))));
  }

  void experimentsSaveAndOpenAsCliJson() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    json doc = smallExperiment("saved");
    doc["speedups"]["precision"] = "bf16-mixed";
    w.setup()->setConfigJson(doc);
    const QString path = root.filePath(QStringLiteral("saved.json"));
    QString err;
    QVERIFY2(w.saveExperiment(path, &err), qPrintable(err));
    auto loaded = wb::proto::loadConfigFile(path.toStdString());  // what `run --config` reads
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
    QCOMPARE(loaded->name, std::string("saved"));
    QCOMPARE(loaded->speedups.precision, std::string("bf16-mixed"));
    QCOMPARE(loaded->data.limit_train, int64_t(2000));
    QCOMPARE(loaded->train.log_every, 5);

    w.setup()->resetToDefaults();
    QVERIFY(w.openExperiment(path, &err));
    QCOMPARE(wb::proto::configToJson(wb::proto::configFromJson(w.setup()->configJson()).value()),
             wb::proto::configToJson(loaded.value()));
    QVERIFY(!w.openExperiment(root.filePath(QStringLiteral("nope.json")), &err));
    QVERIFY(err.contains(QStringLiteral("nope.json")));
  }

  void lastSetupComesBack() {
    auto root = t::scratchRoot();
    QSettings().clear();
    MainWindow::Options o = t::windowOptions(root);
    o.useSettings = true;
    {
      MainWindow w(o);
      w.setup()->setConfigJson(smallExperiment("remember-me"));
      w.show();
      QVERIFY(w.close());
    }
    MainWindow again(o);
    QCOMPARE(fieldString(again.setup()->configJson(), QStringLiteral("name")), QStringLiteral("remember-me"));
    QCOMPARE(fieldNumber(again.setup()->configJson(), QStringLiteral("data.limit_train"), 0), 2000.0);
    QSettings().clear();
  }

  void runsListActionsWorkOnRunDirectories() {
    auto root = t::scratchRoot();
    const QString a = t::writeRunDir(root.path(), QStringLiteral("20260101-000000-a-0001"), QStringLiteral("a"),
                                     t::line(t::stepEvent(1, 2.0)), QStringLiteral("ok"));
    t::writeRunDir(root.path(), QStringLiteral("20260102-000000-b-0002"), QStringLiteral("b"), t::line(t::stepEvent(1, 2.0)),
                   QStringLiteral("ok"));
    MainWindow w(t::windowOptions(root));
    QCOMPARE(w.runs()->rowCount(), 2);
    Run* runA = w.runs()->findByDir(a);
    QVERIFY(runA);

    w.runsPanel()->renameRun(runA, QStringLiteral("renamed"));
    QCOMPARE(runA->name(), QStringLiteral("renamed"));
    auto sum = wb::proto::readJsonFile((a + QStringLiteral("/summary.json")).toStdString());
    QVERIFY(sum.ok());
    QCOMPARE((*sum)["name"].get<std::string>(), std::string("renamed"));

    w.runsPanel()->setBaseline(runA);
    QCOMPARE(w.runs()->baseline(), runA);
    QCOMPARE(w.runs()->index(w.runs()->rowOf(runA), RunsModel::ColSpeedup).data().toString(), QStringLiteral("baseline"));

    QVERIFY(w.runsPanel()->deleteRun(runA, /*ask=*/false));
    QVERIFY(!QFileInfo::exists(a));
    QCOMPARE(w.runs()->rowCount(), 1);
    QVERIFY(!w.runs()->baseline());
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
