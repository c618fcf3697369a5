// The main window's Experiments tab: what its ladder and search start from and measure to (the
// set-up, the Compare tab's target and threshold), their runs in the list, and File → Export.
#include "window/main_window.h"

#include <QAction>
#include <QTabWidget>

#include "compare/compare_view.h"
#include "compare/experiment_runner.h"
#include "compare/experiment_view.h"
#include "compare/tune_view.h"
#include "setup/setup_panel.h"

namespace wb::ui {

// The Experiments tab: what it starts from and measures to, its runs in the list, File → Export.
void MainWindow::connectExperiments() {
  experiments_->setLadderLrScaling([this] { return setup_->lrScaling(); });  // Run ladder's --lr-scaling
  experiments_->setExperimentSource([this](QString* why) { return searchExperiment(why); });
  // The ladder and the search measure to the Compare tab's target and threshold.
  experiments_->setTargetSource([this] { return compare_->targetArguments(); });
  experiments_->setMinEffectSource([this] { return compare_->minEffect(); });
  // A running ladder's rungs join the list and the plots as they start.
  connect(experiments_->ladderRunner(), &ExperimentRunner::rungStarted, this,
          [this](int, int, const QString&, const QString& dir) { showLadderRung(dir, 0); });
  // Each rung that ends (and the ladder's end) is what the speedup rows say was measured here.
  connect(experiments_->ladderRunner(), &ExperimentRunner::rungEnded, setup_, &SetupPanel::refreshMeasured);
  connect(experiments_->ladderRunner(), &ExperimentRunner::finished, setup_, &SetupPanel::refreshMeasured);
  // Find fastest: its finals' runs join the list as they start; "Use best" loads best.json.
  connect(experiments_->tuneView()->runner(), &ExperimentRunner::rungStarted, this,
          [this](int, int, const QString&, const QString& dir) { showLadderRung(dir, 0); });
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

bool MainWindow::exportsExperiment() const { return viewTabs_->currentWidget() == experiments_ && experiments_->canExport(); }

void MainWindow::updateExportAction() { exportAction_->setEnabled(exportsExperiment() || compare_->canExport()); }

}  // namespace wb::ui
