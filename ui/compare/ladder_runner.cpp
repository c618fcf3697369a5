#include "compare/ladder_runner.h"

namespace wb::ui {

LadderRunner::LadderRunner(QObject* parent) : QObject(parent) {
  killTimer_.setSingleShot(true);
  connect(&killTimer_, &QTimer::timeout, this, [this] { process_.kill(); });
  connect(&process_, &QProcess::readyReadStandardError, this, &LadderRunner::readStderr);
  connect(&process_, &QProcess::finished, this, &LadderRunner::onFinished);
  connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    Q_EMIT finished(QString(), false,
                    QStringLiteral("Could not start %1: %2 (set WB_CLI to its path)").arg(process_.program(), process_.errorString()));
  });
}

LadderRunner::~LadderRunner() {
  if (process_.state() == QProcess::NotRunning) return;
  process_.blockSignals(true);
  process_.terminate();
  if (!process_.waitForFinished(3000)) {
    process_.kill();
    process_.waitForFinished(3000);
  }
}

void LadderRunner::start(const QString& program, const QStringList& arguments) {
  if (isRunning()) return;
  outDir_.clear();
  lastLine_.clear();
  pending_.clear();
  cancelled_ = false;
  process_.setProgram(program);
  process_.setArguments(QStringList{QStringLiteral("ladder")} + arguments);
  process_.setStandardOutputFile(QProcess::nullDevice());  // the table is also in ladder.md
  process_.start();
}

void LadderRunner::cancel() {
  if (!isRunning()) return;
  cancelled_ = true;
  process_.terminate();
  killTimer_.start(kKillGraceMs);
}

void LadderRunner::readStderr() {
  pending_ += process_.readAllStandardError();
  int nl;
  while ((nl = pending_.indexOf('\n')) >= 0) {
    const QString line = QString::fromUtf8(pending_.left(nl)).trimmed();
    pending_.remove(0, nl + 1);
    if (line.isEmpty()) continue;
    static const QString kOut = QStringLiteral("ladder -> ");
    if (line.startsWith(kOut)) {
      const int paren = line.lastIndexOf(QStringLiteral(" ("));
      outDir_ = line.mid(kOut.size(), paren > 0 ? paren - kOut.size() : -1);
    }
    lastLine_ = line;
    Q_EMIT progress(line);
  }
}

void LadderRunner::onFinished(int exitCode, QProcess::ExitStatus status) {
  killTimer_.stop();
  readStderr();
  QString error;
  const bool cancelled = cancelled_ || exitCode == 130;
  if (!cancelled) {
    if (status == QProcess::CrashExit) error = QStringLiteral("workbench-cli ladder crashed");
    else if (exitCode == 1) error = QStringLiteral("A ladder step failed: ") + lastLine_;
    else if (exitCode != 0) error = QStringLiteral("workbench-cli ladder stopped (exit %1): %2").arg(exitCode).arg(lastLine_);
  }
  Q_EMIT finished(outDir_, cancelled, error);
}

}  // namespace wb::ui
