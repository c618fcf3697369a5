#include "runs/run_process.h"

#include <csignal>
#include <cstring>

#include <sys/types.h>
#include <unistd.h>

#include "runs/process_group.h"
#include "wb/proto/event_types.h"
#include "wb/proto/run_status.h"

namespace wb::ui {

namespace {
constexpr int kStderrTailLines = 40;
}

RunProcess::RunProcess(QObject* parent) : QObject(parent) {
  process_.setProcessChannelMode(QProcess::SeparateChannels);
  runInOwnGroup(process_);  // a kill reaches the ranks / loaders it starts
  graceTimer_.setSingleShot(true);
  watchdog_.setSingleShot(true);
  connect(&process_, &QProcess::readyReadStandardOutput, this, &RunProcess::onStdout);
  connect(&process_, &QProcess::readyReadStandardError, this, &RunProcess::onStderr);
  connect(&process_, &QProcess::errorOccurred, this, &RunProcess::onError);
  connect(&process_, &QProcess::finished, this, &RunProcess::onFinished);
  connect(&process_, &QProcess::started, this, [this] {
    pgid_ = process_.processId();
    watchdog_.start(watchdogMs_);
    Q_EMIT started();
  });
  connect(&graceTimer_, &QTimer::timeout, this, [this] {
    killedAfterGrace_ = true;
    killGroup(SIGKILL);
  });
  connect(&watchdog_, &QTimer::timeout, this, &RunProcess::onWatchdog);
}

RunProcess::~RunProcess() {
  if (process_.state() != QProcess::NotRunning) {
    // Leaving: nobody will read the events any more; don't leave ranks behind.
    disconnect(&process_, nullptr, this, nullptr);
    killGroup(SIGKILL);
    process_.waitForFinished(5000);
  }
}

void RunProcess::start(const QString& program, const QStringList& arguments) {
  program_ = program;
  process_.start(program, arguments, QIODevice::ReadOnly);
}

void RunProcess::stop() {
  if (done_ || process_.state() == QProcess::NotRunning) return;
  if (stopRequested_) {  // second request: the user means it
    killGroup(SIGKILL);
    return;
  }
  stopRequested_ = true;
  process_.terminate();  // SIGTERM to the launcher: ranks finish the step, write `end`
  graceTimer_.start(graceMs_);
}

void RunProcess::kill() {
  stopRequested_ = true;
  killGroup(SIGKILL);
}

void RunProcess::killGroup(int sig) { signalGroup(process_, pgid_, sig); }

void RunProcess::onStdout() {
  watchdog_.start(watchdogMs_);
  const QByteArray bytes = process_.readAllStandardOutput();
  for (const auto& line : stdoutLines_.feed(bytes.constData(), size_t(bytes.size()))) handleLine(line);
}

void RunProcess::handleLine(const std::string& line) {
  auto ev = proto::decodeEvent(line);
  if (!ev) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) ++malformed_;
    return;
  }
  if (proto::isEvent<proto::EndEvent>(*ev)) endStatus_ = QString::fromStdString(proto::readEndEvent(*ev).status);
  if (proto::isEvent<proto::ErrorEvent>(*ev))
    if (const std::string msg = proto::readErrorEvent(*ev).message; !msg.empty()) errorEventMessage_ = QString::fromStdString(msg);
  Q_EMIT eventReceived(*ev);
}

void RunProcess::onStderr() {
  watchdog_.start(watchdogMs_);
  stderrPartial_ += process_.readAllStandardError();
  int nl;
  while ((nl = stderrPartial_.indexOf('\n')) >= 0) {
    const QString line = QString::fromUtf8(stderrPartial_.left(nl)).trimmed();
    stderrPartial_.remove(0, nl + 1);
    if (line.isEmpty()) continue;
    stderrTail_ << line;
    if (stderrTail_.size() > kStderrTailLines) stderrTail_.removeFirst();
    Q_EMIT stderrLine(line);
  }
}

QString RunProcess::describeError(QProcess::ProcessError error, const QString& program, const QString& qtText) {
  switch (error) {
    case QProcess::FailedToStart:
      return QStringLiteral("Could not start %1 (%2). Check that workbench-cli is built or installed "
                            "beside the workbench, or point the WB_CLI environment variable at it.")
          .arg(program, qtText);
    case QProcess::Crashed:
      return QStringLiteral("%1 stopped unexpectedly (it crashed or was killed).").arg(program);
    case QProcess::Timedout:
      return QStringLiteral("%1 did not answer in time.").arg(program);
    case QProcess::ReadError:
      return QStringLiteral("Could not read the output of %1 (%2).").arg(program, qtText);
    case QProcess::WriteError:
      return QStringLiteral("Could not write to %1 (%2).").arg(program, qtText);
    case QProcess::UnknownError:
      break;
  }
  return QStringLiteral("%1 failed: %2").arg(program, qtText);
}

QString RunProcess::statusForExitCode(int code) { return QString::fromLatin1(proto::statusForExitCode(code)); }

void RunProcess::onError(QProcess::ProcessError error) {
  // Only a failed start has no finished() after it; crashes are handled in onFinished.
  if (error != QProcess::FailedToStart) return;
  finish(Outcome::Failed, QString::fromLatin1(proto::kStatusFailed),
         describeError(error, program_, process_.errorString()));
}

void RunProcess::onFinished(int exitCode, QProcess::ExitStatus exitStatus) {
  graceTimer_.stop();
  watchdog_.stop();
  // Flush a last line that came without its newline.
  if (auto tail = stdoutLines_.finish()) handleLine(*tail);
  if (!stderrPartial_.trimmed().isEmpty()) stderrTail_ << QString::fromUtf8(stderrPartial_).trimmed();
  stderrPartial_.clear();

  const bool crashed = exitStatus == QProcess::CrashExit;
  if (crashed) killGroup(SIGKILL);  // a dead launcher's ranks are of no use to anyone

  const QString tail = stderrTail_.isEmpty() ? QString() : stderrTail_.last();
  auto failedWith = [&](const QString& why) {
    QString msg = errorEventMessage_.isEmpty() ? why : errorEventMessage_;
    finish(Outcome::Failed, QString::fromLatin1(proto::kStatusFailed), msg);
  };

  if (!endStatus_.isEmpty()) {  // the run said how it ended: that is the truth
    if (endStatus_ == QLatin1String(proto::kStatusOk) || endStatus_ == QLatin1String(proto::kStatusEarlyStopped))
      finish(Outcome::Succeeded, endStatus_, QString());
    else if (endStatus_ == QLatin1String(proto::kStatusCancelled))
      finish(Outcome::Cancelled, endStatus_, QStringLiteral("stopped before it finished (it wrote its end and last.pt)."));
    else
      finish(Outcome::Failed, endStatus_, errorEventMessage_.isEmpty() ? tail : errorEventMessage_);
    return;
  }
  if (watchdogFired_) {
    failedWith(QStringLiteral("No output from workbench-cli for %1 minutes: it looked hung and was stopped.")
                   .arg(watchdogMs_ / 60000.0, 0, 'f', 1));
    return;
  }
  if (stopRequested_) {
    finish(Outcome::Cancelled, QString::fromLatin1(proto::kStatusCancelled),
           killedAfterGrace_ ? QStringLiteral("stopped before it finished (killed after a %1 s grace period).").arg(graceMs_ / 1000)
                             : QStringLiteral("stopped before it finished."));
    return;
  }
  if (crashed) {
    const char* sig = ::strsignal(exitCode);
    failedWith(QStringLiteral("workbench-cli was killed by signal %1 (%2) before the run ended.")
                   .arg(exitCode)
                   .arg(QString::fromLocal8Bit(sig ? sig : "unknown")));
    return;
  }
  const QString status = statusForExitCode(exitCode);
  if (status == QLatin1String(proto::kStatusOk)) {
    finish(Outcome::Succeeded, status, QString());
  } else if (status == QLatin1String(proto::kStatusCancelled)) {
    finish(Outcome::Cancelled, status, QStringLiteral("Cancelled."));
  } else {
    QString why = QStringLiteral("workbench-cli exited with code %1").arg(exitCode);
    if (!tail.isEmpty()) why += QStringLiteral(": ") + tail;
    finish(Outcome::Failed, status, errorEventMessage_.isEmpty() ? why : errorEventMessage_);
  }
}

void RunProcess::onWatchdog() {
  if (done_ || process_.state() == QProcess::NotRunning) return;
  watchdogFired_ = true;
  process_.terminate();
  graceTimer_.start(graceMs_);
}

void RunProcess::finish(Outcome outcome, const QString& status, const QString& message) {
  if (done_) return;
  done_ = true;
  graceTimer_.stop();
  watchdog_.stop();
  Q_EMIT finished(outcome, status, message);
}

}  // namespace wb::ui
