#include "runs/run_history.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>

#include <algorithm>

#include "runs/runs_model.h"
#include "wb/proto/cluster_jobs.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/proto/run_summary.h"

namespace wb::ui {

RunHistory::RunHistory(RunsModel* model, QObject* parent) : QObject(parent), model_(model) {
  rescanSoon_.setSingleShot(true);
  rescanSoon_.setInterval(500);  // a new run dir is created in several steps: look once it settled
  connect(&rescanSoon_, &QTimer::timeout, this, [this] { rescan(); });
  connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, [this] { rescanSoon_.start(); });
  poll_.setInterval(1000);
  connect(&poll_, &QTimer::timeout, this, &RunHistory::pollFollowed);
  connect(model_, &RunsModel::runAboutToBeRemoved, this, [this](Run* run) {
    followed_.erase(std::remove_if(followed_.begin(), followed_.end(), [run](const Followed& f) { return f.run == run; }),
                    followed_.end());
  });
}

RunHistory::~RunHistory() = default;

void RunHistory::setRoot(const QString& root) {
  if (!watcher_.directories().isEmpty()) watcher_.removePaths(watcher_.directories());
  root_ = QDir(root).absolutePath();
  QDir().mkpath(root_);  // so it can be watched before the first run creates it
  if (QFileInfo(root_).isDir()) watcher_.addPath(root_);
  rescan();
}

int RunHistory::rescan() {
  if (root_.isEmpty()) return 0;
  // Drop history runs whose folder was deleted outside the window.
  const auto runs = model_->runs();
  for (Run* r : runs)
    if (r->origin() == Run::Origin::History && !r->runDir().isEmpty() && !QFileInfo(r->runDir()).isDir())
      model_->removeRun(r);

  QDir dir(root_);
  // Run ids start with a timestamp: name order is age order; oldest first so the newest ends on top.
  const QStringList names = dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
  int added = 0;
  for (const QString& name : names) {
    const QString path = dir.filePath(name);
    if (model_->findByDir(path)) continue;
    if (addDirectory(path, true)) ++added;
  }
  Q_EMIT scanned(added);
  return added;
}

namespace {

// The run's cluster job (an array task), when one runs it: its id and state on the run. A job
// Slurm ended (a time limit, a lost node, a cancel) before the run wrote its summary fails the
// run in Slurm's words. True: the run is over.
bool takeClusterTask(Run& run) {
  const auto task = proto::clusterTaskOf(run.runDir().toStdString());
  if (!task) return false;
  const QString job = QString::fromStdString(task->job), state = QString::fromStdString(task->state),
                reason = QString::fromStdString(task->reason);
  run.setClusterTask(job, state, reason);
  if (proto::clusterStateActive(task->state) || task->state == "COMPLETED" || task->state == "FAILED") return false;
  if (isFinal(run.status())) return true;
  run.setStatus(RunStatus::Failed, QStringLiteral("Slurm ended job %1: %2%3")
                                       .arg(job, state, reason.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(reason)));
  return true;
}

}  // namespace

Run* RunHistory::addDirectory(const QString& dir, bool atTop) {
  Run* run = Run::fromDirectory(dir);
  if (!run) return nullptr;
  takeClusterTask(*run);
  model_->addRun(run, atTop);
  if (run->status() == RunStatus::Incomplete) follow(run);  // no summary.json: maybe still growing
  return run;
}

Run* RunHistory::openDirectory(const QString& dir, QString* error) {
  const QString abs = QDir(dir).absolutePath();
  if (Run* existing = model_->findByDir(abs)) return existing;
  if (!QFileInfo(abs).isDir()) {
    if (error) *error = QStringLiteral("%1 is not a folder.").arg(abs);
    return nullptr;
  }
  Run* run = addDirectory(abs, true);
  if (!run && error)
    *error = QStringLiteral("%1 is not a run directory: it has neither config.json nor events.jsonl.").arg(abs);
  return run;
}

bool RunHistory::isFollowing(const Run* run) const {
  return std::any_of(followed_.begin(), followed_.end(), [run](const Followed& f) { return f.run == run; });
}

void RunHistory::follow(Run* run) {
  if (isFollowing(run)) return;
  Followed f;
  f.run = run;
  f.reader = std::make_unique<proto::EventFileReader>(proto::RunDir{run->runDir().toStdString()}.events().string());
  // Treat the file's age as the silence so far: a crashed run from last week reads incomplete at once.
  const QDateTime modified = QFileInfo(QString::fromStdString(f.reader->path())).lastModified();
  f.sinceGrowth.start();
  const qint64 ageMs = modified.isValid() ? modified.msecsTo(QDateTime::currentDateTime()) : 0;
  run->markEventsLoaded();  // the reader delivers every event, from the start of the file
  followed_.push_back(std::move(f));
  if (!pollOne(followed_.back())) {
    followed_.pop_back();
  } else if (ageMs > quietAfterS_ * 1000.0) {
    run->setStatus(RunStatus::Incomplete);
  }
  if (!followed_.empty() && !poll_.isActive()) poll_.start();
}

bool RunHistory::pollOne(Followed& f) {
  Run* run = f.run;
  if (!run) return false;
  const qint64 size = QFileInfo(QString::fromStdString(f.reader->path())).size();
  if (size < f.lastSize) run->mutableSeries().clear();  // the reader starts over from the top
  f.lastSize = size;
  auto events = f.reader->poll();
  if (!events.empty()) {
    f.sinceGrowth.restart();
    run->ingest(events);
  }
  if (isFinal(run->status())) return false;  // the end event arrived
  // summary.json appeared without an end event we could read: it decides.
  proto::RunDir rd{run->runDir().toStdString()};
  if (auto sum = proto::readJsonFile(rd.summary()); sum.ok() && sum->is_object()) {
    run->ingest(f.reader->finish());
    if (!isFinal(run->status()))
      run->setStatus(statusFromString(proto::readRunSummary(*sum).status.value_or(proto::kStatusFailed)));
    return false;
  }
  if (!f.sinceCluster.isValid() || f.sinceCluster.elapsed() > 2000) {
    f.sinceCluster.start();
    if (takeClusterTask(*run)) return false;
  }
  const bool quiet = f.sinceGrowth.elapsed() > quietAfterS_ * 1000.0;
  if (proto::clusterStateActive(run->clusterState().toStdString())) {  // its job says, not the silence
    const RunStatus want = run->clusterState() == QLatin1String("PENDING") ? RunStatus::Queued : RunStatus::Running;
    if (run->status() != want) run->setStatus(want);
    return true;
  }
  const RunStatus want = quiet ? RunStatus::Incomplete : RunStatus::Running;
  if (!events.empty() || quiet) {
    if (run->status() != want) run->setStatus(want);
  }
  return true;
}

void RunHistory::pollFollowed() {
  followed_.erase(std::remove_if(followed_.begin(), followed_.end(), [this](Followed& f) { return !pollOne(f); }),
                  followed_.end());
  if (followed_.empty()) poll_.stop();
}

}  // namespace wb::ui
