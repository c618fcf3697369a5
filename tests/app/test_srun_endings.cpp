// Slurm's endings of a worker's run, on the real single-node cluster (the slurm fixture): a job
// cancelled by scancel, one rank stopped by a signal from outside Slurm and a job past its time
// limit each end the run with Slurm's reason in its error, and nothing of the job is left running.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <signal.h>

#include "slurm_cluster.h"
#include "worker_launch.h"

using nlohmann::json;
using namespace wb_test;

namespace {
// Long enough that Slurm ends it, not the training.
const QStringList kLong = {QStringLiteral("train.epochs=1000")};

// The worker process of rank `rank` among those given `runDir` (srun's own process holds it too).
qint64 rankProcess(const QString& runDir, int rank) {
  const QByteArray mark = "SLURM_PROCID=" + QByteArray::number(rank);
  for (qint64 pid : processesWith(runDir)) {
    QFile env(QStringLiteral("/proc/%1/environ").arg(pid));
    if (!env.open(QIODevice::ReadOnly)) continue;
    const QList<QByteArray> vars = env.readAll().split('\0');
    if (vars.contains(mark) && vars.contains(QByteArray("SLURM_STEP_ID=0"))) {
      QFile cmd(QStringLiteral("/proc/%1/cmdline").arg(pid));
      if (cmd.open(QIODevice::ReadOnly) && cmd.readAll().contains("worker")) return pid;
    }
  }
  return -1;
}

QString errorOf(const json& summary) { return QString::fromStdString(summary.value("error", std::string())); }
}  // namespace

class TestSrunEndings : public QObject {
  Q_OBJECT
  QTemporaryDir root_;

 private Q_SLOTS:
  void init() {
    WB_NEED(wb::test::missingSlurm());
  }

  void scancelIsNamedInTheRunsError() {
    const QString dir = root_.filePath(QStringLiteral("scancel")), name = QStringLiteral("wbtest-scancel");
    QProcess srun;
    startSrun(srun, name, dir, kLong);
    const QString job = jobNamed(name);
    QVERIFY2(!job.isEmpty(), qPrintable(textOf(srun)));
    QVERIFY2(waitForStep(dir, 120000), qPrintable(textOf(srun)));
    int rc = 0;
    const QString said = slurmTool(QStringLiteral("scancel"), {job}, &rc);
    QVERIFY2(rc == 0, qPrintable(QStringLiteral("scancel: ") + said));
    QVERIFY(srun.waitForFinished(120000));
    const json s = summaryOf(dir);
    QCOMPARE(QString::fromStdString(s.value("status", "")), QStringLiteral("cancelled"));
    QVERIFY2(errorOf(s).contains(QStringLiteral("Slurm cancelled job ") + job), qPrintable(errorOf(s)));
    QVERIFY2(leftOf(name, dir).isEmpty(), qPrintable(QStringLiteral("left running: ") + leftOf(name, dir)));
  }

  // SIGTERM to one rank, not from Slurm: both ranks agree to stop; rank 0 says Slurm did not end the job.
  void aSignalToOneRankIsNotSlurms() {
    const QString dir = root_.filePath(QStringLiteral("signal")), name = QStringLiteral("wbtest-signal");
    QProcess srun;
    startSrun(srun, name, dir, kLong);
    const QString job = jobNamed(name);
    QVERIFY2(!job.isEmpty(), qPrintable(textOf(srun)));
    QVERIFY2(waitForStep(dir, 120000), qPrintable(textOf(srun)));
    const qint64 rank1 = rankProcess(dir, 1);
    QVERIFY2(rank1 > 0, "rank 1's worker process was not found");
    QCOMPARE(::kill(static_cast<pid_t>(rank1), SIGTERM), 0);
    QVERIFY(srun.waitForFinished(120000));
    const json s = summaryOf(dir);
    QCOMPARE(QString::fromStdString(s.value("status", "")), QStringLiteral("cancelled"));
    QVERIFY2(errorOf(s).contains(QStringLiteral("did not end Slurm job ") + job), qPrintable(errorOf(s)));
    QVERIFY2(leftOf(name, dir).isEmpty(), qPrintable(QStringLiteral("left running: ") + leftOf(name, dir)));
  }

  // Slurm's smallest time limit is a minute, and it looks every half minute or so: ~1.5 minutes.
  void aTimeLimitIsNamedInTheRunsError() {
    const QString dir = root_.filePath(QStringLiteral("timelimit")), name = QStringLiteral("wbtest-timelimit");
    QProcess srun;
    srun.setProcessEnvironment(slurmEnv(freePort()));
    srun.start(QStringLiteral("srun"), QStringList{QStringLiteral("-n"), QStringLiteral("2"), QStringLiteral("-J"), name,
                                                   QStringLiteral("--time=1"), QStringLiteral(WB_CLI_PATH),
                                                   QStringLiteral("worker"), QStringLiteral("--run-dir"), dir} +
                                           sets(kWorkload + QStringList{QStringLiteral("speedups.devices=2")} + kLong));
    const QString job = jobNamed(name);
    QVERIFY2(!job.isEmpty(), qPrintable(textOf(srun)));
    QVERIFY(srun.waitForFinished(200000));
    const json s = summaryOf(dir);
    QCOMPARE(QString::fromStdString(s.value("status", "")), QStringLiteral("cancelled"));
    QVERIFY2(errorOf(s).contains(QStringLiteral("time limit")), qPrintable(errorOf(s)));
    QVERIFY2(errorOf(s).contains(QStringLiteral("Reason=TimeLimit")), qPrintable(errorOf(s)));
    QVERIFY2(leftOf(name, dir).isEmpty(), qPrintable(QStringLiteral("left running: ") + leftOf(name, dir)));
  }
};

QTEST_GUILESS_MAIN(TestSrunEndings)
#include "test_srun_endings.moc"
