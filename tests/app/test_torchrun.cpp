// The worker under a real torchrun 2.x (as a cluster user launches it): one node with 2 ranks
// writes one run folder the report reads; two "nodes" on loopback train to the launcher's result;
// a rank killed under torchrun ends the job with the rank named. Runs where torchrun 2.x is on PATH
// (Debian 13's root: packaging/torch2-check.sh); skips on Debian 12, whose torchrun 1.13 crashes
// under Python 3.11 before starting a worker. torchrun goes through packaging/torchrun-nolibuv.py,
// docs/clusters.md's recipe for builds without libuv (it changes nothing where libuv is there).
#include <QtTest/QtTest>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <csignal>
#include <dirent.h>
#include <fstream>
#include <unistd.h>

#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "worker_launch.h"

using nlohmann::json;
using namespace wb_test;

namespace {

// The reason torchrun 2.x cannot be used here, or empty.
QString torchrunMissing() {
  if (QStandardPaths::findExecutable(QStringLiteral("torchrun")).isEmpty())
    return QStringLiteral("no torchrun on PATH (packaging/torch2-check.sh runs this test with torchrun 2.6)");
  QProcess py;
  py.start(QStringLiteral("python3"), {QStringLiteral("-c"), QStringLiteral("import torch; print(torch.__version__)")});
  if (!py.waitForFinished(120000) || py.exitCode() != 0) return QStringLiteral("python3 cannot import torch");
  const QString version = QString::fromUtf8(py.readAllStandardOutput()).trimmed();
  if (version.section(QLatin1Char('.'), 0, 0).toInt() < 2)
    return QStringLiteral("torchrun here is %1: 1.x crashes under Python 3.11 before starting a worker; this needs "
                          "torchrun 2.x (packaging/torch2-check.sh)")
        .arg(version);
  return {};
}

// torchrun's arguments, then the worker's.
QStringList torchrun(const QStringList& launcherArgs, const QString& runDir, const QStringList& extraSets = {}) {
  return QStringList{QStringLiteral(WB_SOURCE_DIR "/packaging/torchrun-nolibuv.py")} + launcherArgs +
         QStringList{QStringLiteral("--no-python"), QStringLiteral(WB_CLI_PATH), QStringLiteral("worker"),
                     QStringLiteral("--run-dir"), runDir, QStringLiteral("--collective-timeout"),
                     QStringLiteral("60")} +
         sets(kWorkload + extraSets);
}

// The pid of the worker of `runDir` whose environment has RANK=<rank>; 0 if none.
int rankPid(const std::string& runDir, int rank) {
  const std::string key = std::string("\0RANK=", 6) + std::to_string(rank) + std::string("\0", 1);
  int pid = 0;
  DIR* d = ::opendir("/proc");
  if (!d) return 0;
  while (dirent* e = ::readdir(d)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    std::ifstream cmdIn(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(cmdIn)), std::istreambuf_iterator<char>());
    if (cmd.find("worker") == std::string::npos || cmd.find(runDir) == std::string::npos ||
        cmd.find("torchrun") != std::string::npos)
      continue;
    std::ifstream envIn(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(envIn)), std::istreambuf_iterator<char>());
    if (env.find(key) != std::string::npos) pid = std::atoi(e->d_name);
  }
  ::closedir(d);
  return pid;
}

}  // namespace

class TestTorchrun : public QObject {
  Q_OBJECT
  QString missing_;
  QTemporaryDir root_;
  json launcher_;  // the launcher's 2-rank reference (made once)
  const json& launcherResult() {
    if (launcher_.is_null()) launcher_ = launcherTwoRanks(root_.filePath(QStringLiteral("launcher")));
    return launcher_;
  }

 private Q_SLOTS:
  void initTestCase() { missing_ = torchrunMissing(); }

  void oneNodeTwoRanksWriteOneRunFolder() {
    if (!missing_.isEmpty()) QSKIP(qPrintable(missing_));
    QTemporaryDir root;
    const QString runDir = root.filePath(QStringLiteral("torchrun-run"));
    QProcess p;
    p.start(QStringLiteral("python3"),
            torchrun({QStringLiteral("--nproc-per-node"), QStringLiteral("2"), QStringLiteral("--master-port"),
                      QString::number(freePort())},
                     runDir));
    QVERIFY(p.waitForFinished(240000));
    const QString out = textOf(p);
    QVERIFY2(p.exitCode() == 0, qPrintable(out));
    const json s = summaryOf(runDir);
    QCOMPARE(QString::fromStdString(s.value("status", std::string())), QStringLiteral("ok"));
    QCOMPARE(s.value("world_size", 0), 2);
    auto events = wb::proto::readEventsFile(wb::proto::RunDir{runDir.toStdString()}.events().string());
    int starts = 0;
    for (const auto& e : events)
      if (e.value("type", std::string()) == "start") {
        ++starts;
        QVERIFY2(e.contains("backend_check") && e["backend_check"].value("ok", false), e.dump().c_str());
      }
    QVERIFY(starts >= 1);
    // What the window opens it with: the report reads the folder (compare against itself).
    QProcess cmp;
    cmp.start(QStringLiteral(WB_CLI_PATH), {QStringLiteral("compare"), QStringLiteral("--details"), runDir, QStringLiteral("--baseline"), runDir});
    QVERIFY(cmp.waitForFinished(60000));
    const QString table = textOf(cmp);
    QVERIFY2(cmp.exitCode() == 0, qPrintable(table));
    QVERIFY2(table.contains(QStringLiteral("torchrun-run")), qPrintable(table));
  }

  void twoNodesTrainToTheLaunchersTwoRanks() {
    if (!missing_.isEmpty()) QSKIP(qPrintable(missing_));
    QTemporaryDir root;
    const QString viaNodes = root.filePath(QStringLiteral("nodes"));
    const QString port = QString::number(freePort());
    QProcess node[2];
    for (int r = 0; r < 2; ++r)
      node[r].start(QStringLiteral("python3"),
                    torchrun({QStringLiteral("--nnodes"), QStringLiteral("2"), QStringLiteral("--node-rank"),
                              QString::number(r), QStringLiteral("--nproc-per-node"), QStringLiteral("1"),
                              QStringLiteral("--master-addr"), QStringLiteral("127.0.0.1"),
                              QStringLiteral("--master-port"), port},
                             viaNodes, {QStringLiteral("speedups.devices=2")}));
    for (auto& n : node) {
      QVERIFY(n.waitForFinished(240000));
      QVERIFY2(n.exitCode() == 0, qPrintable(textOf(n)));
    }
    compareToLauncher(summaryOf(viaNodes), launcherResult());
  }

  void aKilledRankEndsTheJobNamingIt() {
    if (!missing_.isEmpty()) QSKIP(qPrintable(missing_));
    QTemporaryDir root;
    const QString runDir = root.filePath(QStringLiteral("killed"));
    QProcess p;
    p.start(QStringLiteral("python3"),
            torchrun({QStringLiteral("--nproc-per-node"), QStringLiteral("2"), QStringLiteral("--master-port"),
                      QString::number(freePort())},
                     runDir, {QStringLiteral("data.limit_train=60000"), QStringLiteral("train.log_every=1")}));
    const std::string events = wb::proto::RunDir{runDir.toStdString()}.events().string();
    auto stepped = [&] {
      std::ifstream in(events);
      std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      return all.find("\"type\":\"step\"") != std::string::npos;
    };
    QTRY_VERIFY_WITH_TIMEOUT(stepped(), 180000);
    const int pid = rankPid(runDir.toStdString(), 1);
    QVERIFY(pid > 0);
    ::kill(pid, SIGKILL);
    QVERIFY2(p.waitForFinished(120000), "torchrun did not end within 120 s of rank 1's death");
    const QString out = textOf(p);
    QVERIFY2(p.exitCode() != 0, qPrintable(out));
    // torchrun's failure report names the rank and its signal.
    QVERIFY2(out.contains(QRegularExpression(QStringLiteral("rank\\s*:\\s*1 "))), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("SIGKILL")) || out.contains(QStringLiteral("-9")), qPrintable(out));
  }
};

QTEST_APPLESS_MAIN(TestTorchrun)
#include "test_torchrun.moc"
