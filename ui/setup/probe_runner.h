#pragma once
// Runs `workbench-cli probe workers --json` for the set-up panel's Probe button: one child in its
// own process group (PDEATHSIG: it never outlives the window), its stdout read at the end as the
// probe's result, its stderr lines passed on as progress. cancel() ends it the way RunProcess
// stops a run: SIGTERM to the group (the probe stops at its next check), SIGKILL to the group
// after a grace period. The CLI stores a result only after it measured every candidate, so a
// cancelled (or failed) probe leaves the one stored before it as it was.
//
// Thread affinity: GUI thread. Destroying a runner kills a probe still running (its group).
#include <QObject>
#include <QProcess>
#include <QString>
#include <QTimer>

#include <optional>

#include <nlohmann/json.hpp>

#include "wb/probe/record.h"

namespace wb::ui {

class ProbeRunner : public QObject {
  Q_OBJECT
 public:
  enum class Outcome { Succeeded, Cancelled, Failed };
  Q_ENUM(Outcome)

  explicit ProbeRunner(QObject* parent = nullptr);
  ~ProbeRunner() override;

  // config: a config document (written to a file of the probe's own: the set-up may change
  // meanwhile); seconds per candidate, 0 for the CLI's default; program: workbench-cli (empty:
  // locateCli()). Ignored while a probe runs.
  void start(const nlohmann::json& config, double seconds = 0, const QString& program = QString());
  // Stops a running probe (no-op otherwise); finished(Cancelled) follows once it has exited.
  void cancel();
  bool isRunning() const { return running_; }
  // The running probe's process id, which is also its process group's id; 0 when none.
  qint64 processId() const { return running_ ? pgid_ : 0; }
  // The result of the last probe that succeeded.
  const std::optional<probe::ProbeResult>& result() const { return result_; }
  void setGraceMs(int ms) { graceMs_ = ms; }

 Q_SIGNALS:
  // A line the probe printed about what it is doing ("probe: 2 workers …"), without the prefix.
  void progress(const QString& line);
  // Exactly once per start(): the verdict when it succeeded, else the reason in words.
  void finished(ProbeRunner::Outcome outcome, const QString& message);

 private:
  void onFinished(int code, QProcess::ExitStatus status);
  void onStderr();
  void end(Outcome outcome, const QString& message);
  void killGroup(int signal);

  QProcess process_;
  QTimer grace_, timeout_;
  QString configFile_;
  QString program_;
  QString lastError_;   // the last stderr line that was not progress
  QByteArray stderrPartial_;
  qint64 pgid_ = 0;
  int graceMs_ = 3000;
  bool running_ = false;
  bool cancelled_ = false;
  bool timedOut_ = false;
  std::optional<probe::ProbeResult> result_;
};

}  // namespace wb::ui
