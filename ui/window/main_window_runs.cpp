// The main window running experiments: a run of the set-up, Try vs baseline, their ends and Stop.
#include "window/main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QDirIterator>
#include <QGuiApplication>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>

#include "compare/compare_view.h"
#include "compare/experiment_runner.h"
#include "compare/tune_view.h"
#include "plots/live_plots.h"
#include "runs/cli.h"
#include "runs/run_history.h"
#include "runs/run_queue.h"
#include "runs/runs_model.h"
#include "setup/setup_panel.h"
#include "setup/speedups_group.h"
#include "window/about_dialog.h"
#include "window/help_tour.h"
#include "window/runs_panel.h"
#include "wb/common/paths.h"
#include "wb/proto/config_json.h"
#include "wb/proto/rundir.h"
#include "wb/proto/try_record.h"
#include "wb/common/config_schema.h"
#include "wb/experiment/try.h"
#include "wb/compare/compare.h"
#include "wb/ladder/ladder.h"
#include "wb/ladder/speedup_effects.h"

namespace wb::ui {
using nlohmann::json;

Run* MainWindow::runExperiment() {
  const json doc = setup_->configJson();
  auto parsed = proto::configFromJson(doc);
  if (!parsed.ok() || !setup_->isValid()) {
    const QString why = setup_->whyNotValid();
    showMessage(QStringLiteral("Not started: ") + (why.isEmpty() ? QStringLiteral("fix the fields marked in the set-up first.") : why));
    return nullptr;
  }
  Run* run = queue_->enqueue(setup_->withUserCommand(proto::configToJson(parsed.value())));
  runs_->setShown(run, true);
  runsPanel_->selectRun(run);
  viewTabs_->setCurrentWidget(plots_);
  if (options_.useSettings) QSettings().setValue(QStringLiteral("setup/lastExperiment"), QString::fromStdString(setup_->withUserCommand(doc).dump()));
  QString message = queue_->activeCount() > 0 && !queue_->sideBySide() && run->status() == RunStatus::Queued
                        ? QStringLiteral("Queued %1: it starts when the current run ends.").arg(runs_->displayName(run))
                        : QStringLiteral("Started %1.").arg(runs_->displayName(run));  // its name in the list
  if (const QString caveat = setup_->speedups()->earlyStoppingCaveat(); !caveat.isEmpty()) message += QLatin1Char(' ') + caveat;
  showMessage(message);
  updateActions();
  return run;
}

bool MainWindow::trySpeedup(const QString& key) {
  if (tryRunner_->isRunning()) {
    showMessage(QStringLiteral("A try is running (%1): wait for it or stop it first.").arg(tryKey_));
    return false;
  }
  auto panel = proto::configFromJson(setup_->configJson());
  if (!panel.ok()) {
    showMessage(QStringLiteral("Not started: fix the fields marked in the set-up first."));
    return false;
  }
  Run* baseline = runs_->baseline();
  auto base = baseline ? proto::configFromJson(baseline->config()) : Result<Config>(ladder::ladderBaseline(panel.value()));
  // Your script's runs keep its own config.json (not the workbench's): the set-up, every speedup off.
  if (!base.ok() && !setup_->userCommand().isEmpty()) base = ladder::ladderBaseline(panel.value());
  if (!base.ok()) {
    showMessage(QStringLiteral("The baseline's config cannot be read (%1); pick another baseline.")
                    .arg(QString::fromStdString(base.error().message)));
    return false;
  }
  auto variant = ladder::withOneSpeedup(base.value(), panel.value(), key.toStdString(), setup_->capabilities());
  if (!variant.ok()) {
    showMessage(QStringLiteral("Not started: %1").arg(QString::fromStdString(variant.error().message)));
    return false;
  }
  const std::string setting = ladder::speedupSetting(variant.value(), key.toStdString());
  variant->name = base->name + " + " + setting;
  // The try's folder holds both configs, its pairs and try.json (where the speedup row reads it).
  auto inputs = experiment::writeTryInputs(history_->root().toStdString(), key.toStdString(),
                                           setup_->withUserCommand(proto::configToJson(base.value())), proto::configToJson(variant.value()));
  if (!inputs.ok()) {
    showMessage(QStringLiteral("Not started: %1").arg(QString::fromStdString(inputs.error().message)));
    return false;
  }
  const QString out = QString::fromStdString(inputs->out.string());
  const QString basePath = QString::fromStdString(inputs->baseline_config.string());
  const QString variantPath = QString::fromStdString(inputs->variant_config.string());
  tryKey_ = QString::fromStdString(setting);
  tryRow_ = key;
  tryRunner_->start(queue_->cliPath(), QStringList{QStringLiteral("--config"), basePath, QStringLiteral("--variant-config"), variantPath,
                                                   QStringLiteral("--label"), tryKey_, QStringLiteral("--speedup"), key,
                                                   QStringLiteral("--out"), out, QStringLiteral("--min-effect"),
                                                   QString::number(runs_->minEffect())} +
                                           compare_->targetArguments());
  showMessage(QStringLiteral("Trying %1 against %2: by parts where it can switch in one process (the math check, segments, "
                             "runs to the target where the math changes), else pairs of whole runs…")
                  .arg(tryKey_, baseline ? runs_->displayName(baseline) : QStringLiteral("the set-up with every speedup off")));
  onTryProgress({});
  updateActions();
  return true;
}

// The running try in its row: how long, its pairs so far; the status bar has the latest line.
void MainWindow::onTryProgress(const QString& line) {
  if (!line.isEmpty()) showMessage(QStringLiteral("Try: ") + line);
  if (!tryRunner_->isRunning()) return;
  const QString soFar = tryRunner_->pairsSoFar();
  setup_->speedups()->setTrying(
      tryRow_, QStringLiteral("Trying %1 (%2): %3 Cancel keeps the pairs that finished.")
                   .arg(tryKey_, tryRunner_->elapsedText(),
                        soFar.isEmpty() ? QStringLiteral("measuring.") : soFar + QStringLiteral(" so far.")));
}

void MainWindow::cancelTry() {
  if (!tryRunner_->isRunning()) return;
  tryRunner_->cancel();
  showMessage(QStringLiteral("Stopping the try of %1: the run under way is cut; what finished is kept…").arg(tryKey_));
}

// The try's estimate in words, and the speedup row's measured effect from its try.json.
void MainWindow::onTryFinished(const QString& outDir, bool cancelled, const QString& error) {
  setup_->speedups()->setTrying(QString());
  setup_->refreshMeasured();
  updateActions();
  if (!error.isEmpty()) {
    showMessage(QStringLiteral("Try %1 failed: %2").arg(tryKey_, error));
    return;
  }
  const json& doc = tryRunner_->result();
  const proto::TryRecord record = proto::tryRecordFromJson(doc);
  if (cancelled && record.byParts()) {
    showMessage(QStringLiteral("Try %1 stopped: what it measured is kept in %2 (the experiment's reference runs, once made, "
                               "are reused by the next try).")
                    .arg(tryKey_, outDir));
    return;
  }
  if (!doc.is_object() || (cancelled && record.pairs < 1)) {
    showMessage(QStringLiteral("Try %1 stopped before a pair finished; its runs are kept in %2.").arg(tryKey_, outDir));
    return;
  }
  const ladder::SpeedupEffect e = ladder::tryEffect(doc, "");
  showMessage(QStringLiteral("Try %1").arg(QString::fromStdString(e.text)));
}

void MainWindow::onRunFinished(Run* run) {
  updateActions();
  setup_->refreshMeasured();
  if (!run) return;
  const RunStatus st = run->status();
  if (!runs_->baseline() && (st == RunStatus::Ok || st == RunStatus::EarlyStopped)) {
    runs_->setBaseline(run);
    showMessage(QStringLiteral("%1 finished (%2) and is now the baseline; right-click another run to change it.")
                    .arg(runs_->displayName(run), statusWord(st)));
    return;
  }
  QString msg = QStringLiteral("%1: %2").arg(runs_->displayName(run), statusWord(st));  // as the runs list names it
  if (st == RunStatus::Failed && !run->errorMessage().isEmpty()) msg += QStringLiteral(" — ") + run->errorMessage();
  showMessage(msg);
}

void MainWindow::stopSelectedOrNewest() {
  Run* target = runsPanel_->currentRun();
  if (!target || !(isActive(target->status()) || target->status() == RunStatus::Queued)) {
    target = nullptr;
    for (Run* r : runs_->runs())  // newest first
      if (isActive(r->status())) {
        target = r;
        break;
      }
  }
  if (tryRunner_->isRunning() && (!target || target->runDir().startsWith(tryRunner_->outDir() + QLatin1Char('/')))) {
    cancelTry();  // a try's run stops with its try
    return;
  }
  if (!target) return;
  runsPanel_->stopRun(target);
  showMessage(QStringLiteral("Stopping %1 (it finishes its step and writes its end)…").arg(target->name()));
}

}  // namespace wb::ui
