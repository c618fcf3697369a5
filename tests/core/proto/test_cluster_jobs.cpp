// Which cluster job runs each run of an array, and its state (wb/proto/cluster_jobs.h): merged
// by run folder, found from the run's folder alone in both layouts (the array folder beside the
// runs, or beside their parent). A jobs.json that cannot be read is named and never rewritten.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <fstream>

#include "wb/proto/cluster_jobs.h"

namespace fs = std::filesystem;
using wb::proto::ClusterTask;

class TestClusterJobs : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void aRerunReplacesItsRunsEntry() {
    QTemporaryDir root;
    const fs::path folder = root.filePath(QStringLiteral("slurm")).toStdString();
    const std::string a = root.filePath(QStringLiteral("aa-1")).toStdString(), b = root.filePath(QStringLiteral("aa-2")).toStdString();
    QVERIFY(wb::proto::recordClusterTasks(folder, {{a, "7_0", "PENDING", "Priority", ""}, {b, "7_1", "PENDING", "", ""}}).ok());
    QVERIFY(wb::proto::recordClusterTasks(folder, {{a, "7_0", "RUNNING", "None", ""}}).ok());
    const auto jobs = wb::proto::readClusterJobs(folder);
    QVERIFY(jobs.ok());
    QCOMPARE(int(jobs->tasks.size()), 2);
    QCOMPARE(jobs->tasks[0].state, std::string("RUNNING"));
    QCOMPARE(jobs->tasks[1].job, std::string("7_1"));
  }

  void foundBesideTheRunOrItsParent() {
    QTemporaryDir root;
    const fs::path base = root.path().toStdString();
    const fs::path noiseRun = base / "aa" / "aa-1", refRun = base / "refs" / "key" / "runs" / "seed-1001";
    QVERIFY(wb::proto::recordClusterTasks(base / "aa" / "slurm", {{noiseRun.string(), "8_0", "TIMEOUT", "TimeLimit", ""}}).ok());
    QVERIFY(wb::proto::recordClusterTasks(base / "refs" / "key" / "slurm", {{refRun.string(), "9_4", "RUNNING", "", ""}}).ok());
    const auto a = wb::proto::clusterTaskOf(noiseRun);
    QVERIFY(a && a->job == "8_0" && a->reason == "TimeLimit");
    const auto b = wb::proto::clusterTaskOf(refRun);
    QVERIFY(b && b->job == "9_4");
    QVERIFY(!wb::proto::clusterTaskOf(base / "aa" / "aa-2"));  // not one of its tasks
  }

  // A jobs.json cut mid-file, emptied or of another record: the states are not recorded over it
  // (its tasks would be lost), the refusal names it and why, and the run's task reads as unknown.
  void anUnreadableRecordIsNamedAndKept_data() {
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QString>("why");
    QTest::newRow("cut mid-file") << R"({"tasks": [{"run_dir": "/x/aa-1", "job": "7_0")" << "it is cut mid-file";
    QTest::newRow("emptied") << "" << "it is empty";
    QTest::newRow("another record") << R"({"plan": {}, "pairs": []})" << "no \"tasks\" list";
  }
  void anUnreadableRecordIsNamedAndKept() {
    QFETCH(QString, damage);
    QFETCH(QString, why);
    QTemporaryDir root;
    const fs::path folder = root.path().toStdString(), file = folder / "jobs.json";
    std::ofstream(file) << damage.toStdString();
    const std::string run = (folder.parent_path() / "aa-1").string();
    const auto st = wb::proto::recordClusterTasks(folder, {{run, "7_0", "RUNNING", "", ""}});
    QVERIFY(!st.ok());
    const QString m = QString::fromStdString(st.error().message);
    QVERIFY2(m.contains(QString::fromStdString(file.string() + " is unreadable: ")) && m.contains(why), qPrintable(m));
    std::ifstream in(file);
    QCOMPARE(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), damage.toStdString());
    QVERIFY(!wb::proto::readClusterJobs(folder).ok());
  }

  void whichStatesStillHoldTheRun() {
    QVERIFY(wb::proto::clusterStateActive("PENDING") && wb::proto::clusterStateActive("RUNNING"));
    QVERIFY(!wb::proto::clusterStateActive("COMPLETED") && !wb::proto::clusterStateActive("TIMEOUT"));
  }
};

QTEST_APPLESS_MAIN(TestClusterJobs)
#include "test_cluster_jobs.moc"
