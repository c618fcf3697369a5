// The main window's Experiments tab: what its ladder and search start from and measure to (the
// set-up, the Compare tab's target and threshold), their runs in the list, and File → Export.
#include "window/main_window.h"

#include <QAction>
#include <QProcess>
#include <QTabWidget>

#include "compare/compare_view.h"
#include "compare/experiment_runner.h"
#include "compare/experiment_view.h"
#include "compare/tune_view.h"
#include "runs/run_history.h"
#include "runs/run_queue.h"
#include "setup/setup_panel.h"

namespace wb::ui {

// The Experiments tab: what it starts from and measures to, its runs in the list, File → Export.
void MainWindow::connectExperiments() {
  experiments_->setLadderLrScaling([this] { return setup_->lrScaling(); });  // Run ladder's --lr-scaling
  experiments_->setExperimentSource([this](QString* why) { return searchExperiment(why); });
  // The ladder and the search measure to the Compare tab's target and threshold.
  experiments_->setTargetSource([this] { return compare_->targetArguments(); });
  experiments_->setMinEffectSource([this] { return compare_->minEffect(); });
  // An experiment's runs (a ladder's rungs, a try's parts, a search's trials and finals) stay out
  // of the runs list and the plots while it runs: its answer is on this tab, and double-clicking
  // it in the list opens its runs as a group. Each one that ends, the list is read again.
  // Each rung that ends (and the ladder's end) is what the speedup rows say was measured here.
  connect(experiments_->ladderRunner(), &ExperimentRunner::rungEnded, setup_, &SetupPanel::refreshMeasured);
  connect(experiments_->ladderRunner(), &ExperimentRunner::finished, setup_, &SetupPanel::refreshMeasured);
  connect(experiments_->ladderRunner(), &ExperimentRunner::finished, experiments_, &ExperimentView::refreshList);
  connect(experiments_->tuneView()->runner(), &ExperimentRunner::finished, experiments_, &ExperimentView::refreshList);
  connect(tryRunner_, &ExperimentRunner::finished, experiments_, &ExperimentView::refreshList);
  connect(history_, &RunHistory::scanned, experiments_, &ExperimentView::refreshList);  // one made by the CLI
  // "Use best" loads best.json; Use this setting / the kept setting, the try's or the ladder's.
  connect(experiments_, &ExperimentView::useConfig, this, &MainWindow::useResult);
  connect(compare_, &CompareView::useConfig, this, &MainWindow::useResult);
  connect(compare_, &CompareView::actionRequested, this, &MainWindow::runAdvice);
  connect(experiments_->tuneView(), &TuneView::status, this, &MainWindow::showMessage);
  connect(experiments_, &ExperimentView::openRunsRequested, this, [this](const QString& dir) { openExperimentRuns(dir); });
  connect(experiments_->tuneView(), &TuneView::useConfig, this, [this](const QString& path) { useBest(path); });
  // File → Export writes what the Experiments tab shows while it is current (the open ladder),
  // else the Compare tab's comparison: enabled when that has something to write.
  exportAction_->setToolTip(QStringLiteral("Export the comparison of the ticked runs against the baseline, or the open "
                                           "ladder from the Experiments tab"));
  connect(compare_, &CompareView::canExportChanged, this, &MainWindow::updateExportAction);
  connect(experiments_, &ExperimentView::canExportChanged, this, &MainWindow::updateExportAction);
  connect(viewTabs_, &QTabWidget::currentChanged, this, &MainWindow::updateExportAction);
  updateExportAction();
}

// An Advisor button: the worker probe on the set-up (as its Probe button), anything else as the
// command it names, one at a time; the comparison is read again when it ends.
void MainWindow::runAdvice(const QString& arguments) {
  if (arguments == QLatin1String("probe workers")) {
    setup_->probeWorkers();
    showMessage(QStringLiteral("Probing the loader workers on the set-up: the recommendation comes under Loader workers."));
    return;
  }
  if (adviceProcess_ && adviceProcess_->state() != QProcess::NotRunning) {
    showMessage(QStringLiteral("workbench-cli %1 is still running.").arg(adviceArgs_));
    return;
  }
  if (!adviceProcess_) {
    adviceProcess_ = new QProcess(this);
    connect(adviceProcess_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
      const bool ok = status == QProcess::NormalExit && code == 0;
      showMessage(ok ? QStringLiteral("workbench-cli %1 finished: the Compare tab reads it again.").arg(adviceArgs_)
                     : QStringLiteral("workbench-cli %1 failed (exit %2): %3")
                           .arg(adviceArgs_)
                           .arg(code)
                           .arg(QString::fromUtf8(adviceProcess_->readAllStandardError()).trimmed().section(QLatin1Char('\n'), -1)));
      compare_->refreshNow();
    });
  }
  adviceArgs_ = arguments;
  adviceProcess_->start(queue_->cliPath(), arguments.split(QLatin1Char(' '), Qt::SkipEmptyParts));
  showMessage(QStringLiteral("Running workbench-cli %1…").arg(arguments));
}

bool MainWindow::exportsExperiment() const { return viewTabs_->currentWidget() == experiments_ && experiments_->canExport(); }

void MainWindow::updateExportAction() { exportAction_->setEnabled(exportsExperiment() || compare_->canExport()); }

}  // namespace wb::ui
