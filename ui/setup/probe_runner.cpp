#include "setup/probe_runner.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <csignal>

#include <sys/types.h>
#include <unistd.h>

#include "runs/process_group.h"
#include "runs/cli.h"
#include "runs/run_process.h"
#include "wb/proto/config_json.h"
#include "wb/proto/rundir.h"

namespace wb::ui {
using nlohmann::json;

namespace {
constexpr int kTimeoutMs = 600000;  // a slow model probes for minutes (the probe says how long it took)
const QByteArray kProgressPrefix = QByteArrayLiteral("probe: ");
}  // namespace

ProbeRunner::ProbeRunner(QObject* parent) : QObject(parent) {
  process_.setProcessChannelMode(QProcess::SeparateChannels);
  runInOwnGroup(process_);  // a kill reaches the ranks / loaders it starts
  grace_.setSingleShot(true);
  timeout_.setSingleShot(true);
  connect(&process_, &QProcess::started, this, [this] { pgid_ = process_.processId(); });
  connect(&process_, &QProcess::readyReadStandardError, this, &ProbeRunner::onStderr);
  connect(&process_, &QProcess::finished, this, &ProbeRunner::onFinished);
  connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) end(Outcome::Failed, RunProcess::describeError(e, program_, process_.errorString()));
  });
  connect(&grace_, &QTimer::timeout, this, [this] { killGroup(SIGKILL); });
  connect(&timeout_, &QTimer::timeout, this, [this] {
    timedOut_ = true;
    killGroup(SIGKILL);
  });
}

ProbeRunner::~ProbeRunner() {
  if (process_.state() != QProcess::NotRunning) {
    disconnect(&process_, nullptr, this, nullptr);
    killGroup(SIGKILL);
    process_.waitForFinished(5000);
  }
  if (!configFile_.isEmpty()) QFile::remove(configFile_);
}

void ProbeRunner::start(const json& config, double seconds, const QString& program) {
  if (running_) return;
  running_ = true;
  cancelled_ = timedOut_ = false;
  pgid_ = 0;
  result_.reset();
  lastError_.clear();
  stderrPartial_.clear();
  program_ = program.isEmpty() ? locateCli() : program;
  static int serial = 0;
  configFile_ = QDir::temp().filePath(
      QStringLiteral("workbench-probe-%1-%2.json").arg(QCoreApplication::applicationPid()).arg(++serial));
  if (auto st = proto::writeJsonAtomic(configFile_.toStdString(), config); !st.ok()) {
    end(Outcome::Failed, QString::fromStdString(st.error().message));
    return;
  }
  QStringList args{QStringLiteral("probe"), QStringLiteral("workers"), QStringLiteral("--json"), QStringLiteral("--config"),
                   configFile_};
  if (seconds > 0) args << QStringLiteral("--seconds") << QString::number(seconds);
  timeout_.start(kTimeoutMs);
  process_.start(program_, args, QIODevice::ReadOnly);
}

void ProbeRunner::cancel() {
  if (!running_ || cancelled_ || process_.state() == QProcess::NotRunning) return;
  cancelled_ = true;
  killGroup(SIGTERM);  // the probe stops at its next check and exits 130, storing nothing
  grace_.start(graceMs_);
}

void ProbeRunner::killGroup(int sig) { signalGroup(process_, pgid_, sig); }

void ProbeRunner::onStderr() {
  stderrPartial_ += process_.readAllStandardError();
  int nl;
  while ((nl = stderrPartial_.indexOf('\n')) >= 0) {
    const QByteArray line = stderrPartial_.left(nl).trimmed();
    stderrPartial_.remove(0, nl + 1);
    if (line.isEmpty()) continue;
    if (line.startsWith(kProgressPrefix)) Q_EMIT progress(QString::fromUtf8(line.mid(kProgressPrefix.size())));
    else lastError_ = QString::fromUtf8(line);
  }
}

void ProbeRunner::onFinished(int code, QProcess::ExitStatus status) {
  onStderr();
  if (!stderrPartial_.trimmed().isEmpty()) lastError_ = QString::fromUtf8(stderrPartial_.trimmed());
  if (cancelled_) {
    end(Outcome::Cancelled, QStringLiteral("Probe cancelled: the stored probe (if any) is unchanged."));
    return;
  }
  if (timedOut_) {
    end(Outcome::Failed, QStringLiteral("Probe failed: it did not finish within %1 minutes.").arg(kTimeoutMs / 60000));
    return;
  }
  const QByteArray out = process_.readAllStandardOutput();
  const json doc = json::parse(out.constData(), out.constData() + out.size(), nullptr, false);
  auto parsed = doc.is_object() ? probe::probeFromJson(doc) : Result<probe::ProbeResult>(makeError(Errc::Io, ""));
  if (status == QProcess::NormalExit && code == 0 && parsed.ok()) {
    result_ = std::move(parsed.value());
    end(Outcome::Succeeded, QString::fromStdString(result_->verdict()));
    return;
  }
  QString why = status == QProcess::CrashExit ? RunProcess::describeError(QProcess::Crashed, QFileInfo(program_).fileName(), {})
                : !lastError_.isEmpty()      ? lastError_
                                             : QStringLiteral("exit code %1, no result").arg(code);
  end(Outcome::Failed, QStringLiteral("Probe failed: %1").arg(why));
}

void ProbeRunner::end(Outcome outcome, const QString& message) {
  if (!running_) return;
  running_ = false;
  grace_.stop();
  timeout_.stop();
  if (!configFile_.isEmpty()) QFile::remove(configFile_);
  configFile_.clear();
  Q_EMIT finished(outcome, message);
}

}  // namespace wb::ui
