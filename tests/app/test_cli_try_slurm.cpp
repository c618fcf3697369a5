// workbench-cli try --executor slurm on the real single-node cluster (the slurm fixture): the try
// runs whole as one job on one node writing --out (pairs.json, try.json), its job the same command
// with --executor slurm-job; by parts, the reference runs go first as a job array, and the
// variant's runs after its first go back to the cluster from the job as an array of their own; a
// partition that does not exist is named before anything is sent or written.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include "slurm_cluster.h"
#include "worker_launch.h"

using namespace wb_test;

namespace {
json readJson(const QString& path) {
  auto j = wb::proto::readJsonFile(path.toStdString());
  return j.ok() ? *j : json();
}

QStringList tryArgs(const QString& out, const QStringList& extra = {}) {
  return QStringList{QStringLiteral("try"), QStringLiteral("--out"), out, QStringLiteral("--vary"),
                     QStringLiteral("speedups.workers=0"), QStringLiteral("--repeats"), QStringLiteral("1"),
                     QStringLiteral("--executor"), QStringLiteral("slurm")} +
         sets({QStringLiteral("model.name=lenet"), QStringLiteral("data.limit_train=256"), QStringLiteral("data.limit_val=128"),
               QStringLiteral("train.epochs=1"), QStringLiteral("train.threads=1"), QStringLiteral("train.log_every=4")}) +
         extra;
}
}  // namespace

class TestCliTrySlurm : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void init() {
    WB_NEED(wb::test::missingSlurm());
  }

  void theTryRunsAsOneJob() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("try"));
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH), tryArgs(out));
    QVERIFY(p.waitForFinished(280000));
    const QString said = textOf(p);
    QVERIFY2(p.exitCode() == 0, qPrintable(said));
    QVERIFY2(QFile::exists(out + QStringLiteral("/pairs.json")), qPrintable(said));
    QVERIFY2(QFile::exists(out + QStringLiteral("/try.json")), qPrintable(said));
    QFile script(out + QStringLiteral(".slurm/array-1.sh"));
    QVERIFY(script.open(QIODevice::ReadOnly));
    const QByteArray body = script.readAll();
    // The job runs the same command as what the job itself runs: never --executor slurm again.
    QVERIFY2(body.contains("'--out' '" + out.toUtf8() + "'") && body.contains("'--executor' 'slurm-job'") &&
                 !body.contains("'--executor' 'slurm'"),
             body.constData());
    QVERIFY2(leftOf(QStringLiteral("workbench-try"), out).isEmpty(), "the job is still there");
  }

  // By parts, a change of the math needs the experiment's reference runs: they go first as one
  // job array into the store, and the try's own job finds them there and runs none.
  void aTryByPartsSendsTheReferenceRunsFirstAsAnArray() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("try")), store = root.filePath(QStringLiteral("refs"));
    QStringList args{QStringLiteral("try"), QStringLiteral("--out"), out, QStringLiteral("--vary"), QStringLiteral("optim.lr=0.02"),
                     QStringLiteral("--reference-runs"), QStringLiteral("2"), QStringLiteral("--variant-runs"), QStringLiteral("2"),
                     QStringLiteral("--references"), store, QStringLiteral("--executor"), QStringLiteral("slurm")};
    args += sets({QStringLiteral("model.name=lenet"), QStringLiteral("data.limit_train=256"), QStringLiteral("data.limit_val=128"),
                  QStringLiteral("train.epochs=1"), QStringLiteral("train.threads=1"), QStringLiteral("train.log_every=4")});
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH), args);
    QVERIFY(p.waitForFinished(400000));
    const QString said = textOf(p);
    QVERIFY2(p.exitCode() == 0, qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("0 kept from before, 2 run as the array")), qPrintable(said));
    const QStringList keys = QDir(store).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QCOMPARE(keys.size(), 1);
    const QString folder = store + QLatin1Char('/') + keys.front();
    QFile script(folder + QStringLiteral("/slurm/array-1.sh"));
    QVERIFY2(script.open(QIODevice::ReadOnly), qPrintable(said));
    const QByteArray body = script.readAll();
    QVERIFY2(body.contains("'run' '--config'") && body.contains("--run-dir"), body.constData());
    const json reference = readJson(folder + QStringLiteral("/reference.json"));
    QCOMPARE(int(reference["runs"].size()), 2);
    for (const auto& r : reference["runs"]) QCOMPARE(r.value("status", std::string()), std::string("ok"));
    const json tried = readJson(out + QStringLiteral("/try.json"));
    QCOMPARE(tried["references"].value("reused", -1), 2);  // the job ran none of them
    QCOMPARE(tried["references"].value("ran", -1), 0);
    QVERIFY2(leftOf(QStringLiteral("workbench-references"), out).isEmpty(), "a reference task is still there");
    // The variant's first run ran in the try's job (its timing counts); the second went back to the
    // cluster as a job array of its own, beside the try's runs.
    QCOMPARE(int(tried["variant_runs"].size()), 2);
    QFile variants(out + QStringLiteral("/slurm/array-1.sh"));
    QVERIFY2(variants.open(QIODevice::ReadOnly), qPrintable(said));
    const QByteArray task = variants.readAll();
    QVERIFY2(task.contains("'run' '--config'") && task.contains("variant-seed-1002"), task.constData());
    QVERIFY2(!task.contains("variant-seed-1001"), task.constData());
    QVERIFY2(leftOf(QStringLiteral("workbench-variant"), out).isEmpty(), "a variant task is still there");
  }

  void aPartitionThatDoesNotExistIsNamed() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("try"));
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH), tryArgs(out, {QStringLiteral("--sbatch-arg=--partition=nope")}));
    QVERIFY(p.waitForFinished(120000));
    const QString said = textOf(p);
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(said.contains(QStringLiteral("partition 'nope' does not exist")), qPrintable(said));
    QVERIFY(!QDir(out).exists());
  }
};

QTEST_GUILESS_MAIN(TestCliTrySlurm)
#include "test_cli_try_slurm.moc"
