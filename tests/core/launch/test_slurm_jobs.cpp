// Jobs on the real single-node Slurm cluster (the slurm fixture): submit, wait, cancel, and the
// checks that turn bad input into one clear error (no clients on PATH, a partition that does not
// exist, a job Slurm refuses or can never start, a folder the nodes must write).
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include "../../support/machine.h"

#include <cstdlib>
#include <fstream>

#include "wb/launch/slurm_jobs.h"

namespace sl = wb::launch::slurm;

namespace {

#define NEEDS_CLUSTER() \
  WB_NEED(wb::test::missingSlurm())

std::string message(const wb::Status& s) { return s.ok() ? "" : s.error().message; }

std::string writeScript(const QTemporaryDir& dir, const char* body) {
  const std::string path = dir.filePath(QStringLiteral("job.sh")).toStdString();
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  return path;
}
}  // namespace

class TestSlurmJobs : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void noClientsOnPathIsNamed() {
    const QByteArray path = qgetenv("PATH");
    QTemporaryDir empty;
    qputenv("PATH", empty.path().toUtf8());
    const std::string m = message(sl::clientsPresent());
    qputenv("PATH", path);
    QVERIFY2(m.find("sbatch is not on PATH") != std::string::npos, m.c_str());
  }

  void partitionFromSbatchArguments() {
    QCOMPARE(sl::partitionOf({"--time=5", "-p", "gpu"}), std::string("gpu"));
    QCOMPARE(sl::partitionOf({"--partition=long"}), std::string("long"));
    QCOMPARE(sl::partitionOf({"-pshort"}), std::string("short"));
    QCOMPARE(sl::partitionOf({"--account", "x"}), std::string());
  }

  void statesAsScontrolWritesThem() {
    const auto t = sl::parseJobState("4", "JobId=4 JobName=t JobState=TIMEOUT Reason=TimeLimit Dependency=(null) ExitCode=0:15");
    QVERIFY(t.ended() && t.endedBySlurm() && !t.finished());
    QCOMPARE(t.describe(), std::string("job 4: TIMEOUT (Reason=TimeLimit, ExitCode=0:15)"));
    QVERIFY(!sl::parseJobState("5", "JobId=5 JobState=COMPLETING Reason=None").ended());
    QVERIFY(sl::parseJobState("6", "JobId=6 JobState=PENDING Reason=PartitionConfig").cannotStart());
    QVERIFY(!sl::parseJobState("7", "JobId=7 JobState=PENDING Reason=Resources").cannotStart());
    QVERIFY(sl::parseJobState("8", "JobId=8 JobState=COMPLETED Reason=None").finished());
  }

  void clientsAndPartition() {
    NEEDS_CLUSTER();
    QVERIFY2(sl::clientsPresent().ok(), message(sl::clientsPresent()).c_str());
    QVERIFY2(sl::partitionExists("debug").ok(), message(sl::partitionExists("debug")).c_str());
    const std::string m = message(sl::partitionExists("nope"));
    QVERIFY2(m.find("'nope' does not exist") != std::string::npos && m.find("debug") != std::string::npos, m.c_str());
  }

  void aJobRunsToItsEnd() {
    NEEDS_CLUSTER();
    QTemporaryDir dir;
    const std::string script = writeScript(dir, "echo \"$1\" > \"$SLURM_SUBMIT_DIR/said\"");
    auto id = sl::submit(script, {"--output=/dev/null"}, {"hello"}, dir.path().toStdString());
    QVERIFY2(id.ok(), id.ok() ? "" : id.error().message.c_str());
    auto ended = sl::waitForJob(*id, 120);
    QVERIFY2(ended.ok(), ended.ok() ? "" : ended.error().message.c_str());
    QVERIFY2(ended->finished(), ended->describe().c_str());
    QFile said(dir.filePath(QStringLiteral("said")));
    QVERIFY(said.open(QIODevice::ReadOnly));
    QCOMPARE(said.readAll().trimmed(), QByteArray("hello"));
  }

  void aRefusedJobQuotesSlurm() {
    NEEDS_CLUSTER();
    QTemporaryDir dir;
    auto id = sl::submit(writeScript(dir, "true"), {"--mem=999999999"}, {}, dir.path().toStdString());
    QVERIFY(!id.ok());
    QVERIFY2(id.error().message.find("Requested node configuration is not available") != std::string::npos,
             id.error().message.c_str());
  }

  void aJobThatCanNeverStartIsNamed() {
    NEEDS_CLUSTER();
    QTemporaryDir dir;
    auto id = sl::submit(writeScript(dir, "true"), {"--nodes=32", "--output=/dev/null"}, {}, dir.path().toStdString());
    QVERIFY2(id.ok(), id.ok() ? "" : id.error().message.c_str());
    auto ended = sl::waitForJob(*id, 60);
    QVERIFY(sl::cancel({*id}).ok());
    QVERIFY(!ended.ok());
    QVERIFY2(ended.error().message.find("PartitionConfig") != std::string::npos, ended.error().message.c_str());
  }

  void cancelEndsARunningJob() {
    NEEDS_CLUSTER();
    QTemporaryDir dir;
    auto id = sl::submit(writeScript(dir, "sleep 300"), {"--output=/dev/null"}, {}, dir.path().toStdString());
    QVERIFY(id.ok());
    QTRY_VERIFY_WITH_TIMEOUT(sl::jobState(*id).ok() && sl::jobState(*id)->state == "RUNNING", 60000);
    QVERIFY(sl::cancel({*id}).ok());
    auto ended = sl::waitForJob(*id, 120);
    QVERIFY(ended.ok());
    QCOMPARE(ended->state, std::string("CANCELLED"));
    QVERIFY(ended->endedBySlurm());
  }

  // One call before anything is sent: a partition that does not exist is named before any job goes.
  void theClusterIsCheckedFirst() {
    NEEDS_CLUSTER();
    QTemporaryDir dir;
    const std::string folder = dir.filePath(QStringLiteral("exp")).toStdString();
    QVERIFY2(sl::checkCluster(folder, {"--partition=debug"}).ok(), message(sl::checkCluster(folder, {})).c_str());
    const std::string m = message(sl::checkCluster(folder, {"-p", "nope"}));
    QVERIFY2(m.find("'nope' does not exist") != std::string::npos, m.c_str());
  }

  void theNodesWriteTheFolder() {
    NEEDS_CLUSTER();
    QTemporaryDir dir;
    const std::string shared = dir.filePath(QStringLiteral("experiment")).toStdString();
    QVERIFY2(sl::folderVisible(shared, {}, 120).ok(), message(sl::folderVisible(shared, {}, 120)).c_str());
    QVERIFY(!QFile::exists(QString::fromStdString(shared + "/.slurm-probe")));  // the check leaves nothing behind
  }
};

QTEST_APPLESS_MAIN(TestSlurmJobs)
#include "test_slurm_jobs.moc"
