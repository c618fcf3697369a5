#pragma once
// Runs a real child process for a test (workbench-cli, the packaging tools) and keeps what it printed.
#include <QByteArray>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace wb::test {

struct ProcResult {
  int rc = -1;           // exit code; -1 when it did not start, crashed or timed out
  QByteArray out, err;
  QString error;         // why rc is -1, in words
  QString all() const { return QString::fromUtf8(out + err); }
  // For QVERIFY2: the command's exit and the tail of what it said.
  QByteArray describe() const {
    return (QStringLiteral("exit %1%2\n").arg(rc).arg(error.isEmpty() ? QString() : QStringLiteral(" (") + error + QStringLiteral(")"))
            + all().right(3000)).toUtf8();
  }
};

inline ProcResult runProcess(const QString& program, const QStringList& args, int timeoutMs = 60000,
                             const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(),
                             const QString& workDir = QString()) {
  QProcess p;
  p.setProcessEnvironment(env);
  if (!workDir.isEmpty()) p.setWorkingDirectory(workDir);
  p.start(program, args);
  ProcResult r;
  if (!p.waitForStarted(10000)) {
    r.error = QStringLiteral("could not start %1: %2").arg(program, p.errorString());
    return r;
  }
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished(5000);
    r.error = QStringLiteral("timed out after %1 s").arg(timeoutMs / 1000);
  } else if (p.exitStatus() == QProcess::NormalExit) {
    r.rc = p.exitCode();
  } else {
    r.error = QStringLiteral("crashed");
  }
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}

}  // namespace wb::test
