#pragma once
// Runs Debian's python3 on the recorder in the source tree (app/python), for the recorder's tests.
#include <QDir>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QString>
#include <QStringList>

#include "../../support/proc.h"

#include "../../support/machine.h"

namespace wb::test {

// /usr/bin/python3 (the interpreter the .deb installs the recorder for), else python3 on PATH.
inline QString python3() {
  const QString debian = QStringLiteral("/usr/bin/python3");
  return QFileInfo(debian).isExecutable() ? debian : QStandardPaths::findExecutable(QStringLiteral("python3"));
}

// A QTemporaryDir pattern under the tests' runs root ($WB_RUNS_ROOT, made when missing).
inline QString scratchPattern(const QString& stem) {
  const QString root = qEnvironmentVariable("WB_RUNS_ROOT", QDir::tempPath());
  QDir().mkpath(root);
  return root + QStringLiteral("/") + stem + QStringLiteral("-XXXXXX");
}

inline QString recorderSourceDir() { return QStringLiteral(WB_SOURCE_DIR "/app/python"); }
inline QString pythonTestsDir() { return QStringLiteral(WB_SOURCE_DIR "/tests/app/python"); }

// The recorder from the source tree, and no __pycache__ written into it.
inline QProcessEnvironment pythonEnv() {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  const QString old = env.value(QStringLiteral("PYTHONPATH"));
  env.insert(QStringLiteral("PYTHONPATH"), recorderSourceDir() + (old.isEmpty() ? QString() : QStringLiteral(":") + old));
  env.insert(QStringLiteral("PYTHONDONTWRITEBYTECODE"), QStringLiteral("1"));
  return env;
}

inline ProcResult runPython(const QStringList& args, int timeoutMs = 60000) {
  return runProcess(python3(), args, timeoutMs, pythonEnv());
}

// Empty when `import module` works, else why not (for QSKIP).
inline QString missingPythonModule(const QString& module) {
  if (python3().isEmpty()) return QStringLiteral("no python3 on this machine");
  const ProcResult r = runPython({QStringLiteral("-c"), QStringLiteral("import ") + module}, 120000);
  if (r.rc == 0) return QString();
  const QString said = QString::fromUtf8(r.err).trimmed().section(QLatin1Char('\n'), -1);
  return QStringLiteral("`import %1` fails with %2: %3").arg(module, python3(), said.isEmpty() ? r.error : said);
}

// Debian's python3-torch, for the tests that run a plain PyTorch loop (for WB_NEED).
inline QString missingPythonTorch() {
  const QString why = missingPythonModule(QStringLiteral("torch"));
  return why.isEmpty() ? why : QStringLiteral("python3-torch is needed (packaging/setup.sh installs it): ") + why;
}
// PyTorch Lightning, as `lightning` or `pytorch_lightning` (for WB_NEED).
inline QString missingLightning() {
  const QString a = missingPythonModule(QStringLiteral("lightning"));
  if (a.isEmpty() || missingPythonModule(QStringLiteral("pytorch_lightning")).isEmpty()) return QString();
  return QStringLiteral("Lightning is not installed (Debian 12 has no package for it; packaging/torch2-check.sh --lightning "
                        "runs this with Lightning's sources): ") + a;
}
// python3 itself (for WB_NEED).
inline QString missingPython3() { return python3().isEmpty() ? QStringLiteral("no python3 on this machine") : QString(); }

}  // namespace wb::test
