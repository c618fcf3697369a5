// workbench-cli noise --executor slurm on the real single-node cluster (the slurm fixture): the A/A
// runs go as one job array into the --out folder; the same command continues, keeping what
// finished; bad input (a partition that does not exist, no sbatch on PATH) is one clear error
// before anything is sent or written.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include "../support/noise_refusal.h"
#include "slurm_cluster.h"
#include "worker_launch.h"

using nlohmann::json;
using namespace wb_test;

namespace {
QStringList noiseArgs(const QString& out, const QStringList& extra = {}) {
  return QStringList{QStringLiteral("noise"), QStringLiteral("--runs"), QStringLiteral("2"), QStringLiteral("--out"), out,
                     QStringLiteral("--no-store"), QStringLiteral("--executor"), QStringLiteral("slurm")} +
         sets(kWorkload) + extra;
}

}  // namespace

class TestCliNoiseSlurm : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void init() {
    WB_NEED(wb::test::missingSlurm());
  }

  void theRunsGoAsOneArrayAndTheSameCommandContinues() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("aa"));
    QProcess first;
    first.start(QStringLiteral(WB_CLI_PATH), noiseArgs(out));
    QVERIFY(first.waitForFinished(300000));
    const QString said = textOf(first);
    // Measured, or (ctest runs a test beside this one) refused naming each run that did not count.
    const QString problem = wb::test::noiseRefusalProblem(
        first.exitCode(), said, {out + QStringLiteral("/aa-1"), out + QStringLiteral("/aa-2")});
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY2(said.contains(QStringLiteral("2 of 2 runs to the cluster")), qPrintable(said));
    for (const char* run : {"aa-1", "aa-2"})
      QCOMPARE(QString::fromStdString(summaryOf(out + QLatin1Char('/') + QLatin1String(run)).value("status", "")),
               QStringLiteral("ok"));
    QVERIFY(QFile::exists(out + QStringLiteral("/slurm/array-1.sh")));

    QProcess again;
    again.start(QStringLiteral(WB_CLI_PATH), noiseArgs(out));
    QVERIFY(again.waitForFinished(300000));
    const QString said2 = textOf(again);
    QVERIFY2(said2.contains(QStringLiteral("0 of 2 runs to the cluster")), qPrintable(said2));
    QVERIFY(!QFile::exists(out + QStringLiteral("/slurm/array-2.sh")));
  }

  void aPartitionThatDoesNotExistIsNamed() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("aa"));
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH), noiseArgs(out, {QStringLiteral("--sbatch-arg=--partition=nope")}));
    QVERIFY(p.waitForFinished(120000));
    const QString said = textOf(p);
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(said.contains(QStringLiteral("partition 'nope' does not exist")) && said.contains(QStringLiteral("debug")),
             qPrintable(said));
    QVERIFY(!QDir(out).exists());  // nothing sent, nothing written
  }

  void noSbatchOnPathIsNamed() {
    QTemporaryDir root, empty;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PATH"), empty.path());
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(WB_CLI_PATH), noiseArgs(root.filePath(QStringLiteral("aa"))));
    QVERIFY(p.waitForFinished(120000));
    const QString said = textOf(p);
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(said.contains(QStringLiteral("sbatch is not on PATH")), qPrintable(said));
  }
};

QTEST_GUILESS_MAIN(TestCliNoiseSlurm)
#include "test_cli_noise_slurm.moc"
