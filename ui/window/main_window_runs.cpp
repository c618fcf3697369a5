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
#include "compare/experiment_view.h"
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
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/proto/try_record.h"
#include "wb/common/config_schema.h"
#include "wb/experiment/try.h"
#include "wb/compare/compare.h"
#include "wb/ladder/ladder.h"
#include "wb/ladder/speedup_effects.h"
#include "wb/proto/record_files.h"

namespace wb::ui {
using nlohmann::json;

namespace {

// The try.json in `dir` (an empty object when there is none yet).
json readTryJson(const QString& dir) {
  const QByteArray bytes = readAll(QDir(dir).filePath(QString::fromLatin1(proto::kTryFile)));
  json doc = json::parse(bytes.constData(), bytes.constData() + bytes.size(), nullptr, false);
  return doc.is_object() ? doc : json::object();
}

// What a try cut short keeps for the next one, in words (its record's "kept").
QStringList keptOf(const json& tryDoc) {
  QStringList out;
  for (const auto& k : proto::tryRecordFromJson(tryDoc).kept) out << QString::fromStdString(k);
  return out;
}

}  // namespace

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
  for (const QString& caveat : setup_->speedups()->caveats()) message += QLatin1Char(' ') + caveat;
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
  const json baseDoc = setup_->withUserCommand(proto::configToJson(base.value()));
  const json variantDoc = proto::configToJson(variant.value());
  const QStringList options = QStringList{QStringLiteral("--min-effect"), QString::number(runs_->minEffect())} + compare_->targetArguments();
  // A try cut short on the same change, configs and options is continued in its folder (what it
  // measured is reused), else a new folder holds both configs, its parts and try.json.
  const CutExperiment asked{QString(), QStringList{key} + options, QByteArray::fromStdString(baseDoc.dump() + variantDoc.dump())};
  const bool continuing = cutTry_.continues(asked);
  QString out = cutTry_.dir;
  if (!continuing) {
    auto inputs = experiment::writeTryInputs(history_->root().toStdString(), key.toStdString(), baseDoc, variantDoc);
    if (!inputs.ok()) {
      showMessage(QStringLiteral("Not started: %1").arg(QString::fromStdString(inputs.error().message)));
      return false;
    }
    out = QString::fromStdString(inputs->out.string());
  }
  const QString basePath = QDir(out).filePath(QString::fromLatin1(proto::kBaselineConfigFile));
  const QString variantPath = QDir(out).filePath(QString::fromLatin1(proto::kVariantConfigFile));
  const QStringList reused = continuing ? keptOf(readTryJson(out)) : QStringList();
  cutTry_ = asked;
  cutTry_.dir = out;
  tryOut_ = out;
  tryKey_ = QString::fromStdString(setting);
  tryRow_ = key;
  tryRunner_->start(queue_->cliPath(), QStringList{QStringLiteral("--config"), basePath, QStringLiteral("--variant-config"), variantPath,
                                                   QStringLiteral("--label"), tryKey_, QStringLiteral("--speedup"), key,
                                                   QStringLiteral("--out"), out} +
                                           options);
  tryTick_.start();
  const QString against = baseline ? runs_->displayName(baseline) : QStringLiteral("the set-up with every speedup off");
  showMessage(continuing ? QStringLiteral("Trying %1 against %2 again: it continues the try cut short in %3%4.")
                               .arg(tryKey_, against, QFileInfo(out).fileName(),
                                    reused.isEmpty() ? QString() : QStringLiteral(", reusing ") + reused.join(QStringLiteral(", ")))
                         : QStringLiteral("Trying %1 against %2: the math check, the throughput, then runs to the target where "
                                          "the math changes…")
                               .arg(tryKey_, against));
  experiments_->showRunningTry(out, tryKey_);
  onTryProgress({});
  updateActions();
  return true;
}

// The running try in its row and on the Experiments tab: what it measures now (n of N where it
// counts runs) and how long it has run; the status bar has the latest line.
void MainWindow::onTryProgress(const QString& line) {
  if (!line.isEmpty()) showMessage(QStringLiteral("Try: ") + line);
  if (!tryRunner_->isRunning()) return;
  const QString soFar = tryRunner_->pairsSoFar();
  const QString now = !tryRunner_->phase().isEmpty() ? tryRunner_->phase()
                      : !soFar.isEmpty()            ? soFar + QStringLiteral(" so far")
                                                    : QStringLiteral("starting");
  const QString text = QStringLiteral("Trying %1 · %2 · %3. Cancel keeps what finished.").arg(tryKey_, now, tryRunner_->elapsedText());
  setup_->speedups()->setTrying(tryRow_, text);
  experiments_->showTryProgress(text);
}

void MainWindow::cancelTry() {
  if (!tryRunner_->isRunning()) return;
  tryRunner_->cancel();
  showMessage(QStringLiteral("Cancelling the try of %1: the run under way is cut; what finished is kept…").arg(tryKey_));
}

// The try's answer on the Experiments tab and in the status bar, the speedup row's measured effect
// from its try.json; a cancelled try says so and what trying it again reuses.
void MainWindow::onTryFinished(const QString& outDir, bool cancelled, const QString& error) {
  tryTick_.stop();
  setup_->speedups()->setTrying(QString());
  setup_->refreshMeasured();
  updateActions();
  const QString out = outDir.isEmpty() ? tryOut_ : outDir;  // a try cut before its end event still has its folder
  const json doc = tryRunner_->result().is_object() ? tryRunner_->result() : readTryJson(out);
  const proto::TryRecord record = proto::tryRecordFromJson(doc);
  if (!cancelled && record.status != proto::kStatusCancelled) cutTry_ = {};  // only a cut try is continued
  QString openError;
  experiments_->openTry(out, &openError);
  const QString what = record.setting.empty() ? tryKey_ : QString::fromStdString(record.setting);
  if (cancelled || record.status == proto::kStatusCancelled) {
    const QStringList kept = keptOf(doc);
    showMessage(QStringLiteral("Try %1 cancelled. %2")
                    .arg(what, kept.isEmpty() ? QStringLiteral("Nothing finished to reuse yet.")
                                                 : QStringLiteral("Trying it again reuses %1.").arg(kept.join(QStringLiteral(", ")))));
    return;
  }
  if (!error.isEmpty()) {
    showMessage(QStringLiteral("Try %1 failed: %2").arg(what, error));
    return;
  }
  showMessage(experiments_->answerText());
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
