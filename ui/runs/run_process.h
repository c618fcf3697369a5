#pragma once
// Drives one `workbench-cli run --events-stdout` child (modelled on qBittorrent's
// searchhandler): stdout is split into JSON Lines with a partial last line kept until it
// completes; stderr is kept as a log tail; QProcess errors become words a user understands;
// the run ends in exactly one finished() signal (succeeded, cancelled or failed).
//
// Stopping: stop() sends SIGTERM to the launcher (it lets the ranks finish their step and write
// `end`), then SIGKILLs the whole process group after the grace period. The child runs in its
// own process group, which the launcher's ranks share (so the group kill reaches them), and
// gets SIGTERM if this process dies (PR_SET_PDEATHSIG); the ranks die with the launcher, so no
// rank outlives the window. A watchdog stops a child that prints nothing for watchdogMs.
//
// Thread affinity: GUI thread (or any one thread with an event loop). Ownership: QObject tree;
// the destructor kills a child that is still running and waits for it.
#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <nlohmann/json.hpp>

#include "wb/proto/events.h"

namespace wb::ui {

class RunProcess : public QObject {
  Q_OBJECT
 public:
  enum class Outcome { Succeeded, Cancelled, Failed };

  explicit RunProcess(QObject* parent = nullptr);
  ~RunProcess() override;

  void setGracePeriodMs(int ms) { graceMs_ = ms; }
  void setWatchdogMs(int ms) { watchdogMs_ = ms; }
  void setEnvironment(const QProcessEnvironment& env) { process_.setProcessEnvironment(env); }

  // Starts program with arguments. finished() follows exactly once, also when it cannot start.
  void start(const QString& program, const QStringList& arguments);
  // Graceful stop (SIGTERM, then SIGKILL of the group after the grace period). A second call
  // kills at once.
  void stop();
  // Kills the whole process group now.
  void kill();

  bool isRunning() const { return process_.state() != QProcess::NotRunning; }
  bool isFinished() const { return done_; }
  qint64 processId() const { return process_.processId(); }
  // The status word of the end: ok | early-stopped | cancelled | failed | diverged.
  const QString& endStatus() const { return endStatus_; }
  // Last lines written to stderr (bounded).
  QString stderrTail() const { return stderrTail_.join(QLatin1Char('\n')); }

  // Words for a QProcess error, naming the program and what to do.
  static QString describeError(QProcess::ProcessError error, const QString& program, const QString& qtText);
  // Exit code -> the contract's status word (0 ok, 4 diverged, 130 cancelled, else failed).
  static QString statusForExitCode(int code);

 Q_SIGNALS:
  void started();
  // Every decoded event, in order. Malformed lines are skipped (counted in malformedLines()).
  void eventReceived(const nlohmann::json& event);
  // Human messages from the child's stderr, one line at a time.
  void stderrLine(const QString& line);
  // Exactly once. status: the contract's word; message: why it failed or was cancelled
  // (empty on success).
  void finished(wb::ui::RunProcess::Outcome outcome, const QString& status, const QString& message);

 public:
  int malformedLines() const { return malformed_; }

 private:
  void onStdout();
  void onStderr();
  void onError(QProcess::ProcessError error);
  void onFinished(int exitCode, QProcess::ExitStatus exitStatus);
  void onWatchdog();
  void handleLine(const std::string& line);
  void finish(Outcome outcome, const QString& status, const QString& message);
  void killGroup(int signal);

  QProcess process_;
  QString program_;
  proto::LineBuffer stdoutLines_;
  QByteArray stderrPartial_;
  QStringList stderrTail_;
  QTimer graceTimer_;
  QTimer watchdog_;
  int graceMs_ = 20000;           // above the launcher's own SIGTERM->SIGKILL grace for its ranks
  int watchdogMs_ = 30 * 60 * 1000;
  qint64 pgid_ = 0;
  bool stopRequested_ = false;
  bool killedAfterGrace_ = false;
  bool watchdogFired_ = false;
  bool done_ = false;
  QString endStatus_;
  QString errorEventMessage_;
  int malformed_ = 0;
};

}  // namespace wb::ui
