#include "runs/run_queue.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "runs/cli.h"
#include "runs/runs_model.h"
#include "wb/common/paths.h"
#include "wb/proto/rundir.h"

namespace wb::ui {

RunQueue::RunQueue(RunsModel* model, QObject* parent)
    : QObject(parent), model_(model), runsRoot_(QString::fromStdString(wb::defaultRunsRoot().string())), cliPath_(locateCli()) {
  connect(model_, &RunsModel::runAboutToBeRemoved, this, [this](Run* run) {
    queue_.removeAll(run);
    if (RunProcess* p = running_.take(run)) {
      p->disconnect(this);
      p->kill();
      p->deleteLater();
    }
  });
}

RunQueue::~RunQueue() {
  // RunProcess destructors kill their process groups; say nothing to Runs that are going away.
  for (RunProcess* p : running_) p->disconnect(this);
}

void RunQueue::setSideBySide(bool on) {
  sideBySide_ = on;
  startNext();
}

Run* RunQueue::enqueue(const nlohmann::json& config) {
  auto* run = new Run(Run::Origin::Launched);
  run->setConfig(config);
  run->setName(QString::fromStdString(config.value("name", std::string("run"))));
  run->setStatus(RunStatus::Queued);
  model_->addRun(run, true);
  queue_.append(run);
  startNext();
  return run;
}

int RunQueue::activeCount() const { return int(running_.size()); }
int RunQueue::queuedCount() const {
  int n = 0;
  for (const auto& r : queue_)
    if (r) ++n;
  return n;
}

RunProcess* RunQueue::processFor(const Run* run) const { return running_.value(run, nullptr); }

void RunQueue::startNext() {
  while (!queue_.isEmpty() && (sideBySide_ || running_.isEmpty())) {
    QPointer<Run> next = queue_.takeFirst();
    if (next) launch(next);
  }
  if (running_.isEmpty() && queuedCount() == 0) Q_EMIT idle();
}

void RunQueue::launch(Run* run) {
  // The run id is made here, at start, so ids sort by start time; --run-dir lets the window
  // know the folder before the first event (the history scan won't list it twice).
  const std::string name = run->config().value("name", std::string("run"));
  const QString dir = QDir(runsRoot_).filePath(QString::fromStdString(wb::makeRunId(name)));
  run->setRunDir(dir);
  run->setStatus(RunStatus::Starting);

  const QString cfgPath = configDir_.filePath(QFileInfo(dir).fileName() + QStringLiteral(".json"));
  if (auto st = proto::writeJsonAtomic(cfgPath.toStdString(), run->config()); !st.ok()) {
    run->setStatus(RunStatus::Failed, QString::fromStdString(st.error().message));
    Q_EMIT runFinished(run);
    return;
  }
  QDir().mkpath(runsRoot_);

  auto* proc = new RunProcess(this);
  proc->setGracePeriodMs(graceMs_);
  proc->setWatchdogMs(watchdogMs_);
  running_.insert(run, proc);
  QPointer<Run> guard(run);
  connect(proc, &RunProcess::eventReceived, run, [run](const nlohmann::json& ev) { run->ingest(ev); });
  connect(proc, &RunProcess::finished, this,
          [this, guard, proc, cfgPath](RunProcess::Outcome o, const QString& status, const QString& message) {
            QFile::remove(cfgPath);
            onFinished(guard, proc, o, status, message);
          });
  proc->start(cliPath_, {QStringLiteral("run"), QStringLiteral("--config"), cfgPath, QStringLiteral("--run-dir"), dir,
                         QStringLiteral("--events-stdout")});
  Q_EMIT runStarted(run);
}

void RunQueue::onFinished(Run* run, RunProcess* proc, RunProcess::Outcome outcome, const QString& status,
                          const QString& message) {
  running_.remove(run);
  proc->deleteLater();
  if (run) {
    if (outcome != RunProcess::Outcome::Succeeded) {
      const QString tail = proc->stderrTail();
      if (!tail.isEmpty()) run->appendLogTail(tail);
    }
    // The end event already set the status when there was one; this covers crashes and
    // failed starts, and agrees with the end event otherwise.
    run->setStatus(statusFromString(status.toStdString()),
                   outcome == RunProcess::Outcome::Succeeded ? QString() : message);
    Q_EMIT runFinished(run);
  }
  startNext();
}

void RunQueue::stop(Run* run) {
  if (!run) return;
  if (queue_.removeAll(run) > 0) {
    run->setStatus(RunStatus::Cancelled, QStringLiteral("Taken off the queue before it started."));
    if (running_.isEmpty() && queuedCount() == 0) Q_EMIT idle();
    return;
  }
  if (RunProcess* p = running_.value(run)) {
    if (run->status() != RunStatus::Stopping) run->setStatus(RunStatus::Stopping);
    p->stop();
  }
}

void RunQueue::stopAll() {
  for (auto& r : queue_)
    if (r) r->setStatus(RunStatus::Cancelled, QStringLiteral("Taken off the queue before it started."));
  queue_.clear();
  const auto runs = running_.keys();
  for (const Run* r : runs) stop(const_cast<Run*>(r));
  if (running_.isEmpty()) Q_EMIT idle();
}

}  // namespace wb::ui
