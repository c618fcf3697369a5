// The worker under a real Slurm (the slurm fixture's single-node cluster): `srun -n 2 workbench-cli
// worker` rendezvouses through MASTER_ADDR/MASTER_PORT, trains DDP and ZeRO-2 to the local
// launcher's 2-rank result into one run folder, and tune's best-sbatch.sh is accepted by sbatch and
// runs as a batch job.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include "slurm_cluster.h"
#include "wb/proto/config_json.h"
#include "wb/tune/tune.h"
#include "worker_launch.h"

using nlohmann::json;
using namespace wb_test;

class TestSrun : public QObject {
  Q_OBJECT
  QTemporaryDir root_;
  json ddpReference_;  // the launcher's 2-rank DDP run, which the srun and sbatch runs must match

  json ddpReference() {
    if (ddpReference_.is_null()) ddpReference_ = launcherTwoRanks(root_.filePath(QStringLiteral("launcher-ddp")));
    return ddpReference_;
  }

  // srun's run: its ranks' own environment (what env.cpp reads) and the summary of the run folder.
  static json srunRun(const QString& dir, const QStringList& extra) {
    QProcess p;
    startSrun(p, QStringLiteral("wbtest-srun"), dir, extra);
    if (!p.waitForFinished(240000) || p.exitCode() != 0) {
      qWarning("srun: %s", qPrintable(textOf(p)));
      return json();
    }
    return summaryOf(dir);
  }

 private Q_SLOTS:
  void init() {
    WB_NEED(wb::test::missingSlurm());
  }

  // srun's own variables, as its tasks see them: the worker reads SLURM_PROCID / SLURM_NTASKS.
  void srunGivesEachTaskItsRank() {
    int rc = 0;
    const QString out = slurmTool(QStringLiteral("srun"), {QStringLiteral("-n"), QStringLiteral("2"), QStringLiteral("sh"),
                                                           QStringLiteral("-c"),
                                                           QStringLiteral("echo $SLURM_PROCID/$SLURM_NTASKS/$SLURM_LOCALID")},
                                  &rc);
    QVERIFY2(rc == 0, qPrintable(out));
    QStringList lines = out.split(QLatin1Char('\n'));
    lines.sort();
    QCOMPARE(lines, (QStringList{QStringLiteral("0/2/0"), QStringLiteral("1/2/1")}));
  }

  void srunTrainsDdpToTheLaunchersResult() {
    const QString dir = root_.filePath(QStringLiteral("srun-ddp"));
    const json s = srunRun(dir, {});
    QVERIFY2(s.is_object(), "srun's run failed (see the warning above)");
    QCOMPARE(QString::fromStdString(s.value("status", "")), QStringLiteral("ok"));
    compareToLauncher(s, ddpReference());
    QVERIFY2(leftOf(QStringLiteral("wbtest-srun"), dir).isEmpty(), "the job or its ranks are still there");
  }

  void srunTrainsZero2ToTheLaunchersResult() {
    const QStringList zero2{QStringLiteral("speedups.sharding=zero2"), QStringLiteral("optim.name=adam"),
                            QStringLiteral("optim.lr=0.002")};
    const json s = srunRun(root_.filePath(QStringLiteral("srun-zero2")), zero2);
    QVERIFY2(s.is_object(), "srun's ZeRO-2 run failed (see the warning above)");
    compareToLauncher(s, launcherTwoRanks(root_.filePath(QStringLiteral("launcher-zero2")), zero2));
  }

  // tune's hand-over as a batch job: sbatch takes best-sbatch.sh, whose srun trains the launcher's result.
  void bestSbatchRunsAsABatchJob() {
    const json reference = ddpReference();
    QVERIFY2(reference.is_object(), "the launcher's 2-rank run failed");
    auto doc = wb::proto::readJsonFile(wb::proto::RunDir{root_.filePath(QStringLiteral("launcher-ddp")).toStdString()}.config());
    QVERIFY(doc.ok());
    auto config = wb::proto::configFromJson(*doc);
    QVERIFY2(config.ok(), config.ok() ? "" : config.error().message.c_str());
    const QString tuneDir = root_.filePath(QStringLiteral("tune"));
    QVERIFY(QDir().mkpath(tuneDir));
    const QString best = tuneDir + QStringLiteral("/best.json"), script = tuneDir + QStringLiteral("/best-sbatch.sh");
    QFile b(best), s(script);
    QVERIFY(b.open(QIODevice::WriteOnly) && s.open(QIODevice::WriteOnly));
    b.write(QByteArray::fromStdString(doc->dump(2)));
    s.write(QByteArray::fromStdString(wb::tune::sbatchScript(*config, best.toStdString())));
    b.close();
    s.close();

    int rc = 0;
    QString said = slurmTool(QStringLiteral("sbatch"), {QStringLiteral("--test-only"), script}, &rc);
    QVERIFY2(rc == 0, qPrintable(QStringLiteral("sbatch --test-only refused best-sbatch.sh: ") + said));

    const QString runDir = tuneDir + QStringLiteral("/best-run");
    QProcess sbatch;
    QProcessEnvironment env = slurmEnv(0);
    env.remove(QStringLiteral("MASTER_ADDR"));  // the script finds them itself
    env.remove(QStringLiteral("MASTER_PORT"));
    sbatch.setProcessEnvironment(env);
    sbatch.setWorkingDirectory(tuneDir);
    sbatch.start(QStringLiteral("sbatch"), {QStringLiteral("--wait"), QStringLiteral("-J"), QStringLiteral("wbtest-sbatch"), script, runDir});
    QVERIFY(sbatch.waitForFinished(240000));
    const QString id = QString::fromUtf8(sbatch.readAllStandardOutput()).section(QLatin1Char(' '), -1).trimmed();
    QFile log(tuneDir + QStringLiteral("/workbench-best-%1.out").arg(id));
    log.open(QIODevice::ReadOnly);
    QVERIFY2(sbatch.exitCode() == 0, qPrintable(textOf(sbatch) + QString::fromUtf8(log.readAll())));
    compareToLauncher(summaryOf(runDir), reference);
    QVERIFY2(leftOf(QStringLiteral("wbtest-sbatch"), runDir).isEmpty(), "the job or its ranks are still there");
  }
};

QTEST_GUILESS_MAIN(TestSrun)
#include "test_srun.moc"
