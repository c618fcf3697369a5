// The window: an invalid set-up is refused; a launcher that cannot start shows the run as failed
// with its error; drops open run folders, dataset folders and experiments; experiments save and
// open as the CLI's JSON; the last set-up comes back; the runs list's actions work on run
// directories. (Real runs from the window: test_window_runs.cpp.)
#include <QAction>
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QHeaderView>
#include <QStatusBar>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSettings>
#include <QtTest/QtTest>

#include "compare/compare_view.h"
#include "compare/experiment_view.h"
#include "compare/speedup_chart.h"
#include "plots/live_plots.h"
#include "plots/qcp.h"
#include "runs/run.h"
#include "runs/run_history.h"
#include "runs/run_process.h"
#include "runs/run_queue.h"
#include "runs/runs_model.h"
#include "setup/json_fields.h"
#include "setup/setup_panel.h"
#include "setup/speedups_group.h"
#include "ui_test_util.h"
#include "window/main_window.h"
#include "window/runs_panel.h"
#include "wb/probe/record.h"
#include "wb/ladder/ladder.h"
#include "wb/proto/config_json.h"
#include "wb/proto/rundir.h"

using nlohmann::json;
using namespace wb::ui;
namespace t = wb::ui::test;

namespace {

using t::smallExperiment;

// A finished try by parts whose record carries its answer (as core writes it), and its folder's
// variant config, as the window's Try writes them.
json finishedTry() {
  return {{"status", "ok"}, {"method", "composed"}, {"setting", "channels-last on"}, {"speedup", "channels_last"},
          {"answer", "Turn on channels-last: 1.10\u00D7 faster to 71.4 % val acc (95 %: 1.04-1.17\u00D7)."},
          {"reached", true}, {"words", "1.10\u00D7 faster to target: its throughput"},
          {"estimate", {{"to_target", {{"point", 1.10}, {"lo", 1.04}, {"hi", 1.17}, {"verdict", "faster"}, {"pairs", 0}}}}}};
}

QString writeTry(const QTemporaryDir& root, const QString& name, const json& record) {
  const QString dir = root.filePath(name);
  QDir().mkpath(dir);
  json variant = wb::proto::configToJson(wb::Config{});
  variant["speedups"]["channels_last"] = true;
  t::writeFile(dir + QStringLiteral("/variant.config.json"), QByteArray::fromStdString(variant.dump()));
  t::writeFile(dir + QStringLiteral("/try.json"), QByteArray::fromStdString(record.dump()));
  return dir;
}

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
    QVERIFY(w.setup()->errorsShown().contains(QStringLiteral("Learning rate: 0 \u2014 must be > 0")));
    QVERIFY2(w.runAction()->toolTip().contains(QStringLiteral("Learning rate")), qPrintable(w.runAction()->toolTip()));
    QVERIFY(!w.runExperiment());
    QCOMPARE(w.runs()->rowCount(), 0);
  }

  // With nine runs ticked, at 1024x700, 1280x800 and 1920x1080 on each tab: every column of the
  // runs list in view with room for names, legends that leave the plot its height, a Compare
  // chart and table that keep theirs, and a window that goes down to 1024 px.
  void fitsTheScreen_data() {
    QTest::addColumn<QSize>("size");
    QTest::newRow("1024x700") << QSize(1024, 700);
    QTest::newRow("1280x800") << QSize(1280, 800);
    QTest::newRow("1920x1080") << QSize(1920, 1080);
  }
  void fitsTheScreen() {
    QFETCH(QSize, size);
    auto root = t::scratchRoot();
    const QString baseDir = t::writeManyRuns(root.path());
    MainWindow w(t::windowOptions(root));
    RunsModel* runs = w.runs();
    runs->setBaseline(runs->findByDir(baseDir));
    for (Run* r : runs->runs()) runs->setShown(r, true);
    w.resize(size);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY2(w.minimumSizeHint().width() <= 1024, qPrintable(QString::number(w.minimumSizeHint().width())));
    QTRY_COMPARE(w.size(), size);
    QTest::qWait(100);
    const QString tag = QString::fromLatin1(QTest::currentDataTag());

    // The runs list: no column behind a scroll bar, and room for a name (at 1024 px the figure
    // columns give up their headers' width for it: "8192 train…batch 64", not "819…b64").
    auto* view = w.runsPanel()->view();
    QVERIFY2(!view->horizontalScrollBar()->isVisible(), "the runs list scrolls sideways");
    QVERIFY2(view->columnWidth(RunsModel::ColName) >= 140, qPrintable(QString::number(view->columnWidth(RunsModel::ColName))));
    const QString throughput = runs->headerData(RunsModel::ColThroughput, Qt::Horizontal, Qt::DisplayRole).toString();
    QCOMPARE(throughput, size.width() <= 1024 ? QStringLiteral("Samples/s") : QStringLiteral("Train samples/s"));

    // The loss plot keeps most of its height for the curves.
    w.plots()->showTab(QStringLiteral("loss"));
    w.plots()->flush(true);
    QCustomPlot* loss = w.plots()->plot(QStringLiteral("loss"));
    QVERIFY2(loss->axisRect()->height() >= loss->height() * 2 / 5,
             qPrintable(QStringLiteral("curves %1 of %2 px").arg(loss->axisRect()->height()).arg(loss->height())));
    t::grabIfAsked(w, tag + QStringLiteral("-live"), size);

    // The Compare tab: a chart with its height, a table with rows, whichever detail tab is shown.
    auto* views = w.findChild<QTabWidget*>(QStringLiteral("viewTabs"));
    views->setCurrentWidget(w.compare());
    w.compare()->refreshNow();
    for (QTabWidget* details : w.compare()->findChildren<QTabWidget*>()) {
      for (int i = 0; i < details->count(); ++i) {
        details->setCurrentIndex(i);
        QCoreApplication::processEvents();
        QWidget* shown = details->currentWidget();
        QVERIFY2(shown->width() >= 300 && shown->height() >= 150,
                 qPrintable(details->tabText(i) + QStringLiteral(": %1x%2").arg(shown->width()).arg(shown->height())));
        if (shown == w.compare()->chart()) {
          QCustomPlot* chart = w.compare()->chart()->plot();
          chart->replot(QCustomPlot::rpImmediateRefresh);
          QVERIFY2(chart->axisRect()->height() >= 100,
                   qPrintable(QStringLiteral("chart %1x%2, bars %3 px high").arg(chart->width()).arg(chart->height()).arg(chart->axisRect()->height())));
        }
        const QTableWidget* table = w.compare()->table();
        QVERIFY2(table->viewport()->height() >= 2 * table->verticalHeader()->defaultSectionSize(),
                 qPrintable(QStringLiteral("comparison table %1 px").arg(table->viewport()->height())));
        t::grabIfAsked(w, tag + QStringLiteral("-compare-") + QString::number(i), size);
      }
    }

    // The Experiments tab: the ladder's page (the experiments on disk, or a ladder's table over
    // its chart) and the Fastest page get their room, and its controls do not widen the window.
    views->setCurrentWidget(w.experiments());
    for (QTabWidget* pages : w.experiments()->findChildren<QTabWidget*>()) {
      for (int i = 0; i < pages->count(); ++i) {
        pages->setCurrentIndex(i);
        QCoreApplication::processEvents();
        QWidget* shown = pages->currentWidget();
        QVERIFY2(shown->width() >= 300 && shown->height() >= 200,
                 qPrintable(pages->tabText(i) + QStringLiteral(": %1x%2").arg(shown->width()).arg(shown->height())));
        QVERIFY2(w.width() <= size.width(), qPrintable(QStringLiteral("window %1 px wide").arg(w.width())));
        t::grabIfAsked(w, tag + QStringLiteral("-experiments-") + QString::number(i), size);
      }
    }
  }

  // The probe's offer ("Use 0 workers") goes under the count: the set-up keeps the width of its
  // pane at 1024x700, the workers row's Try vs baseline stays whole and in view, nothing is cut.
  void anOfferDoesNotWidenTheSetUp() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    w.resize(1024, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    json doc = w.setup()->configJson();
    doc["speedups"]["workers"] = 2;
    w.setup()->setConfigJson(doc);
    wb::probe::ProbeResult probe;  // the loader is not the bottleneck: fewer workers are offered
    probe.cores = 2;
    probe.loader_batches_per_s = 10000;
    probe.step_alone_ms = 10;
    probe.rows = {{0, 100, 1.0, 1000, 9.0, 10.0}, {2, 100, 1.0, 1500, 0.5, 10.0}};
    probe.recommended = 0;
    w.setup()->speedups()->offerProbe(probe);
    QVERIFY(!w.setup()->speedups()->useProbeButton()->isHidden());
    QCOMPARE(w.setup()->speedups()->useProbeButton()->text(), QStringLiteral("Use 0 workers"));
    auto* scroll = w.findChild<QScrollArea*>(QStringLiteral("setupScroll"));
    QTRY_VERIFY2(w.setup()->width() <= scroll->viewport()->width(),
                 qPrintable(QStringLiteral("set-up %1 px in a %2 px pane").arg(w.setup()->width()).arg(scroll->viewport()->width())));
    auto* tryButton = w.setup()->findChild<QPushButton*>(QStringLiteral("try:workers"));
    const QRect inPane(tryButton->mapTo(scroll->viewport(), QPoint(0, 0)), tryButton->size());
    QVERIFY2(inPane.right() < scroll->viewport()->width(), qPrintable(QString::number(inPane.right())));
    QCOMPARE(tryButton->text(), QStringLiteral("Try vs baseline"));
    QVERIFY(tryButton->width() >= tryButton->sizeHint().width());
    t::grabIfAsked(w, QStringLiteral("setup-offer-1024x700"), QSize(1024, 700));
  }

  // Use best says what it changes, field by field in the schema's words, before it changes it
  // (here without the question), then says it again.
  void useBestSaysWhatItChanges() {
    auto root = t::scratchRoot();
    auto options = t::windowOptions(root);
    options.askBeforeUse = false;
    MainWindow w(options);
    json best = w.setup()->configJson();
    best["name"] = "best-of-search";
    best["speedups"]["workers"] = 2;
    const QString path = root.filePath(QStringLiteral("best.json"));
    QVERIFY(t::writeFile(path, QByteArray::fromStdString(best.dump())));
    const QStringList changes = w.setupChanges(path);
    QCOMPARE(changes.size(), 2);
    QVERIFY2(changes.join(QLatin1Char('|')).contains(QStringLiteral("Name: fashion-mnist-lenet \u2192 best-of-search")), qPrintable(changes.join(QLatin1Char('|'))));
    QVERIFY2(changes.join(QLatin1Char('|')).contains(QStringLiteral(": 0 \u2192 2")), qPrintable(changes.join(QLatin1Char('|'))));
    for (const QString& c : changes) QVERIFY2(!c.startsWith(QStringLiteral("speedups.")), qPrintable(c));  // labels, not keys
    w.useBest(path);
    QCOMPARE(wb::ui::fieldValue(w.setup()->configJson(), QStringLiteral("speedups.workers")), json(2));
    QVERIFY2(w.statusBar()->toolTip().contains(QStringLiteral("Use best changed")), qPrintable(w.statusBar()->toolTip()));
    QVERIFY(w.setupChanges(path).isEmpty());
  }

  // A try's folder given as a path (the command line, a drop) opens on the Experiments tab with
  // its answer first; a folder that holds no experiment is neither a run nor opened as one.
  void anExperimentFolderOpensOnTheExperimentsTab() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    const QString dir = writeTry(root, QStringLiteral("20261207-100000-try-channels_last"), finishedTry());
    QVERIFY(w.openPath(dir));
    QCOMPARE(w.findChild<QTabWidget*>(QStringLiteral("viewTabs"))->currentWidget(), static_cast<QWidget*>(w.experiments()));
    QCOMPARE(w.experiments()->answerText(), QStringLiteral("Turn on channels-last: 1.10\u00D7 faster to 71.4 % val acc (95 %: 1.04-1.17\u00D7)."));
    QString error;
    QVERIFY(!w.experiments()->openFolder(root.path(), &error));
    QVERIFY2(error.contains(QStringLiteral("holds no experiment")) && error.contains(QStringLiteral("try.json")), qPrintable(error));
  }

  // A try that ends leads the Experiments tab with its record's answer (not a sentence the window
  // builds), joins the list of experiments at once (no restart), and offers Use … when it was
  // clearly faster, which loads its setting into the set-up.
  void aFinishedTryLeadsWithItsAnswerAndJoinsTheList() {
    auto root = t::scratchRoot();
    auto options = t::windowOptions(root);
    options.askBeforeUse = false;
    MainWindow w(options);
    auto* list = w.experiments()->findChild<QTableWidget*>(QStringLiteral("ladderTable"));
    QVERIFY(list->item(0, 0)->text().startsWith(QStringLiteral("None yet")));
    const QString dir = writeTry(root, QStringLiteral("20261207-100000-try-channels_last"), finishedTry());
    Q_EMIT w.tryRunner()->finished(dir, false, QString());
    QCOMPARE(w.experiments()->answerText(), QStringLiteral("Turn on channels-last: 1.10\u00D7 faster to 71.4 % val acc (95 %: 1.04-1.17\u00D7)."));
    QVERIFY2(w.statusBar()->toolTip().contains(QStringLiteral("Turn on channels-last")), qPrintable(w.statusBar()->toolTip()));
    QCOMPARE(list->item(0, 1)->text(), QStringLiteral("try"));  // listed without a restart
    QCOMPARE(list->item(0, 0)->data(Qt::UserRole).toString(), dir);
    auto* use = w.experiments()->findChild<QPushButton*>(QStringLiteral("experimentUse"));
    QVERIFY(use && !use->isHidden());
    QCOMPARE(use->text(), QStringLiteral("Use channels-last on"));
    use->click();
    QCOMPARE(wb::ui::fieldValue(w.setup()->configJson(), QStringLiteral("speedups.channels_last")), json(true));
    QVERIFY2(w.statusBar()->toolTip().startsWith(QStringLiteral("Use channels-last on changed")), qPrintable(w.statusBar()->toolTip()));
  }

  // A cancelled try reads "cancelled" (never "failed", nor an empty folder) and says what trying
  // it again reuses, from its record's "kept"; it offers nothing to use.
  void aCancelledTryReadsCancelledAndWhatItReuses() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    json cut = finishedTry();
    cut.erase("answer");
    cut["status"] = "cancelled";
    cut["words"] = "";
    cut["estimate"] = json::object();
    cut["kept"] = {"the math check", "2 of 5 reference runs"};
    const QString dir = writeTry(root, QStringLiteral("20261207-100000-try-precision"), cut);
    Q_EMIT w.tryRunner()->finished(dir, true, QString());
    const QString status = w.statusBar()->toolTip();
    QVERIFY2(status.contains(QStringLiteral("cancelled")) && status.contains(QStringLiteral("reuses the math check, 2 of 5 reference runs")),
             qPrintable(status));
    QVERIFY2(!status.contains(QStringLiteral("kept in .")) && !status.contains(QStringLiteral("no speedup taken")), qPrintable(status));
    QVERIFY2(w.experiments()->answerText().contains(QStringLiteral("cancelled")), qPrintable(w.experiments()->answerText()));
    QVERIFY(w.experiments()->findChild<QPushButton*>(QStringLiteral("experimentUse"))->isHidden());
  }

  // The list of experiments follows the runs folder: one the CLI writes there appears when the
  // folder is read again, and an open ladder closes back to the list.
  void theListFollowsTheFolderAndALadderClosesBackToIt() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    auto* list = w.experiments()->findChild<QTableWidget*>(QStringLiteral("ladderTable"));
    const QString ladder = root.filePath(QStringLiteral("20261207-100000-ladder"));
    QVERIFY(QDir().mkpath(ladder));
    wb::ladder::Ladder l;
    wb::ladder::LadderRow base;
    base.step.key = "baseline", base.step.added = "all speedups off";
    l.rows = {base};
    json doc = wb::ladder::ladderJson(l);
    doc["answer"] = "Nothing tried here made training faster.";
    QVERIFY(t::writeFile(ladder + QStringLiteral("/ladder.json"), QByteArray::fromStdString(doc.dump())));
    w.history()->rescan();
    QCOMPARE(list->item(0, 0)->data(Qt::UserRole).toString(), ladder);
    Q_EMIT list->cellDoubleClicked(0, 0);
    QCOMPARE(w.experiments()->answerText(), QStringLiteral("Nothing tried here made training faster."));
    auto* back = w.experiments()->findChild<QPushButton*>(QStringLiteral("experimentBack"));
    QVERIFY(back && !back->isHidden());
    back->click();
    QVERIFY(!w.experiments()->canExport());
    QCOMPARE(list->item(0, 0)->data(Qt::UserRole).toString(), ladder);  // the list again
    QVERIFY(back->isHidden());
  }

  // Every shortcut does one thing (F5 was both Run and Refresh: Qt ran neither); F5 is Run.
  void shortcutsAreUnambiguous() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    QHash<QString, QString> owner;
    for (QAction* a : w.findChildren<QAction*>()) {
      for (const QKeySequence& k : a->shortcuts()) {
        const QString key = k.toString();
        QVERIFY2(!owner.contains(key), qPrintable(key + QStringLiteral(": ") + owner.value(key) + QStringLiteral(" and ") + a->text()));
        owner.insert(key, a->text());
      }
    }
    QVERIFY(w.runAction()->shortcuts().contains(QKeySequence(Qt::Key_F5)));
  }

  // Reset says what it did.
  void resetSaysSo() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    QAction* reset = nullptr;
    for (QAction* a : w.findChildren<QAction*>())
      if (a->text() == QStringLiteral("Reset set-up to defaults")) reset = a;
    QVERIFY(reset);
    reset->trigger();
    QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("reset")), qPrintable(w.statusBar()->currentMessage()));
    QCOMPARE(wb::ui::fieldValue(w.setup()->configJson(), QStringLiteral("speedups.workers")), json(0));
    // Every speedup off, inference-mode evaluation too: the first baseline is
    // the ladder's, so the ladder's baseline is not named "− inference-mode eval".
    QCOMPARE(wb::ui::fieldValue(w.setup()->configJson(), QStringLiteral("speedups.inference_eval")), json(false));
    MainWindow fresh(t::windowOptions(root));
    QCOMPARE(wb::ui::fieldValue(fresh.setup()->configJson(), QStringLiteral("speedups.inference_eval")), json(false));
  }

  // An error under the field being edited shows its message, and Run is refused.
  void anErrorShowsUnderItsField() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* lr = w.setup()->findChild<QLineEdit*>(QStringLiteral("optim.lr"));
    auto* scroll = w.findChild<QScrollArea*>();
    QVERIFY(lr && scroll);
    scroll->ensureWidgetVisible(lr, 0, 0);
    lr->setFocus();
    lr->selectAll();
    QTest::keyClicks(lr, QStringLiteral("-1"));
    auto* error = w.setup()->findChild<QLabel*>(QStringLiteral("error:optim.lr"));
    QVERIFY(error && !error->isHidden());
    QVERIFY(error->text().contains(QStringLiteral("must be > 0")));
    QVERIFY(!w.runExperiment());
  }

  // A folder kind with no folder: Run is refused, and the button says why.
  void runIsRefusedWithoutAFolder() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    auto* kind = w.setup()->findChild<QComboBox*>(QStringLiteral("data.kind"));
    kind->setCurrentIndex(kind->findData(QStringLiteral("folder")));
    QVERIFY(!w.runAction()->isEnabled());
    QVERIFY(!w.runExperiment());
    QCOMPARE(w.runs()->rowCount(), 0);
    QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("Pick the dataset folder")));
    QCOMPARE(w.findChild<QPushButton*>(QStringLiteral("runButton"))->toolTip(), QStringLiteral("Pick the dataset folder first."));
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
    QCOMPARE(w.runs()->index(w.runs()->rowOf(runA), RunsModel::ColSpeedupThroughput).data().toString(), QStringLiteral("baseline"));
    // A name the user gave is the name the list shows.
    QCOMPARE(w.runs()->displayName(runA), QStringLiteral("renamed"));

    QVERIFY(w.runsPanel()->deleteRun(runA, /*ask=*/false));
    QVERIFY(!QFileInfo::exists(a));
    QCOMPARE(w.runs()->rowCount(), 1);
    QVERIFY(!w.runs()->baseline());
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
