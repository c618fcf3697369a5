#pragma once
// Runs experiments from the window: each enqueued config becomes a Run (queued), then one
// `workbench-cli run --config <file> --run-dir <root>/<run-id> --events-stdout` RunProcess.
// One at a time by default (fair timing: runs don't share the CPU), or all at once when
// side-by-side is on.
//
// Thread affinity: GUI thread. Ownership: the RunProcesses are children of the queue; the Runs
// belong to the model. Destroying the queue kills whatever still runs (no orphans).
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include "runs/run.h"
#include "runs/run_process.h"

namespace wb::ui {

class RunsModel;

class RunQueue : public QObject {
  Q_OBJECT
 public:
  explicit RunQueue(RunsModel* model, QObject* parent = nullptr);
  ~RunQueue() override;

  void setRunsRoot(const QString& root) { runsRoot_ = root; }
  const QString& runsRoot() const { return runsRoot_; }
  void setCliPath(const QString& path) { cliPath_ = path; }
  const QString& cliPath() const { return cliPath_; }
  void setSideBySide(bool on);
  bool sideBySide() const { return sideBySide_; }
  void setGracePeriodMs(int ms) { graceMs_ = ms; }
  void setWatchdogMs(int ms) { watchdogMs_ = ms; }

  // Adds a run for this config (a complete, valid config JSON) and starts it when its turn comes.
  Run* enqueue(const nlohmann::json& config);
  // Queued: taken off the queue (cancelled). Running: graceful stop (a second call kills).
  void stop(Run* run);
  void stopAll();
  int activeCount() const;
  int queuedCount() const;
  bool isBusy() const { return activeCount() + queuedCount() > 0; }
  RunProcess* processFor(const Run* run) const;

 Q_SIGNALS:
  void runStarted(wb::ui::Run* run);
  void runFinished(wb::ui::Run* run);
  void idle();  // nothing running, nothing queued

 private:
  void startNext();
  void launch(Run* run);
  void onFinished(Run* run, RunProcess* proc, RunProcess::Outcome outcome, const QString& status,
                  const QString& message);

  RunsModel* model_;
  QString runsRoot_;
  QString cliPath_;
  bool sideBySide_ = false;
  int graceMs_ = 20000;
  int watchdogMs_ = 30 * 60 * 1000;
  QTemporaryDir configDir_;             // the config files handed to the CLI
  QVector<QPointer<Run>> queue_;
  QHash<const Run*, RunProcess*> running_;
};

}  // namespace wb::ui
