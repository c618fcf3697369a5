#pragma once
// What the tests on the real single-node Slurm cluster share (test_srun, test_srun_endings): whether
// the slurm fixture's cluster is there (and why not), srun with the rendezvous exported, the job
// of a name, and the check that nothing of a job is left running.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QThread>

#include "worker_launch.h"
#include "../support/machine.h"

namespace wb_test {

// A Slurm client's output (stdout, trimmed); its exit code in *rc.
inline QString slurmTool(const QString& program, const QStringList& args, int* rc = nullptr) {
  QProcess p;
  p.start(program, args);
  p.waitForFinished(60000);
  if (rc) *rc = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  return QString::fromUtf8(p.readAllStandardOutput() + (rc && *rc != 0 ? p.readAllStandardError() : QByteArray()))
      .trimmed();
}

// The test's environment for srun and sbatch (both pass it on to the tasks): no torchrun variables
// (they win over Slurm's), the rendezvous on this host, workbench-cli on PATH.
inline QProcessEnvironment slurmEnv(int port) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  for (const char* k : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "WB_STORE_FILE", "MASTER_ADDR"})
    env.remove(QString::fromLatin1(k));
  env.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1"));
  env.insert(QStringLiteral("MASTER_PORT"), QString::number(port));
  const QString cliDir = QFileInfo(QStringLiteral(WB_CLI_PATH)).absolutePath();
  env.insert(QStringLiteral("PATH"), cliDir + QLatin1Char(':') + env.value(QStringLiteral("PATH")));
  return env;
}

// `srun -n 2 -J name workbench-cli worker --run-dir dir` over kWorkload plus `extra`.
inline void startSrun(QProcess& p, const QString& name, const QString& dir, const QStringList& extra) {
  p.setProcessEnvironment(slurmEnv(freePort()));
  p.start(QStringLiteral("srun"), QStringList{QStringLiteral("-n"), QStringLiteral("2"), QStringLiteral("-J"), name,
                                              QStringLiteral(WB_CLI_PATH), QStringLiteral("worker"),
                                              QStringLiteral("--run-dir"), dir} +
                                      sets(kWorkload + QStringList{QStringLiteral("speedups.devices=2")} + extra));
}

// The id of the job named `name` once Slurm lists it ("" after 60 s).
inline QString jobNamed(const QString& name) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < 60000) {
    const QString id = slurmTool(QStringLiteral("squeue"), {QStringLiteral("-h"), QStringLiteral("-n"), name,
                                                            QStringLiteral("-o"), QStringLiteral("%i")});
    if (!id.isEmpty()) return id.section(QLatin1Char('\n'), 0, 0);
    QThread::msleep(200);
  }
  return QString();
}

// The processes whose command line holds `text` (the run folder a job's ranks were given).
inline QList<qint64> processesWith(const QString& text) {
  QList<qint64> out;
  const QByteArray needle = text.toUtf8();
  for (const QString& pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
    bool number = false;
    const qint64 id = pid.toLongLong(&number);
    if (!number || id == QCoreApplication::applicationPid()) continue;
    QFile f(QStringLiteral("/proc/%1/cmdline").arg(pid));
    if (f.open(QIODevice::ReadOnly) && f.readAll().contains(needle)) out << id;
  }
  return out;
}

// What of job `name` is still there after up to 30 s: Slurm's listing of it and its ranks' processes.
inline QString leftOf(const QString& name, const QString& runDir) {
  QElapsedTimer t;
  t.start();
  QString left;
  do {
    const QString listed = slurmTool(QStringLiteral("squeue"), {QStringLiteral("-h"), QStringLiteral("-n"), name});
    const auto pids = processesWith(runDir);
    left = listed;
    for (qint64 pid : pids) left += QStringLiteral(" pid %1").arg(pid);
    if (left.isEmpty()) return left;
    QThread::msleep(200);
  } while (t.elapsed() < 30000);
  return left;
}

// Waits (at most `ms`) until the run's events hold a training step.
inline bool waitForStep(const QString& runDir, int ms) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < ms) {
    QFile f(runDir + QStringLiteral("/events.jsonl"));
    if (f.open(QIODevice::ReadOnly) && f.readAll().contains("\"type\":\"step\"")) return true;
    QThread::msleep(100);
  }
  return false;
}

}  // namespace wb_test
