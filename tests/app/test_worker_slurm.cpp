// docs/clusters.md's srun recipe, checked without Slurm: two workers started by hand with the variables
// srun sets (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE) and the rendezvous
// the user exports (MASTER_ADDR, MASTER_PORT) train to the launcher's 2-rank result. srun itself
// is not run.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include "worker_launch.h"

using nlohmann::json;
using namespace wb_test;

class TestWorkerSlurm : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // docs/clusters.md's srun recipe without Slurm: the variables srun sets, two workers started by hand.
  void slurmVariablesTrainToTheLaunchersTwoRanks() {
    QTemporaryDir root;
    const QString dir = root.filePath(QStringLiteral("srun"));
    const QString port = QString::number(freePort());
    QProcess rank[2];
    for (int r = 0; r < 2; ++r) {
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      for (const char* k : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "WB_STORE_FILE", "SLURM_JOB_ID", "SLURM_STEP_ID"})
        env.remove(QString::fromLatin1(k));  // a batch script's own SLURM_JOB_ID would make each one process
      env.insert(QStringLiteral("SLURM_PROCID"), QString::number(r));
      env.insert(QStringLiteral("SLURM_LOCALID"), QString::number(r));
      env.insert(QStringLiteral("SLURM_NTASKS"), QStringLiteral("2"));
      env.insert(QStringLiteral("SLURM_NTASKS_PER_NODE"), QStringLiteral("2"));
      env.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1"));
      env.insert(QStringLiteral("MASTER_PORT"), port);
      rank[r].setProcessEnvironment(env);
      rank[r].start(QStringLiteral(WB_CLI_PATH),
                    QStringList{QStringLiteral("worker"), QStringLiteral("--run-dir"), dir} +
                        sets(kWorkload + QStringList{QStringLiteral("speedups.devices=2")}));
    }
    for (auto& p : rank) {
      QVERIFY(p.waitForFinished(240000));
      QVERIFY2(p.exitCode() == 0, qPrintable(textOf(p)));
    }
    compareToLauncher(summaryOf(dir), launcherTwoRanks(root.filePath(QStringLiteral("launcher"))));
  }

};

QTEST_APPLESS_MAIN(TestWorkerSlurm)
#include "test_worker_slurm.moc"
