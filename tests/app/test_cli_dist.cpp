// Multi-process runs through `workbench-cli run`: real ranks on loopback (Gloo), supervision.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <csignal>
#include <dirent.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

#include "wb/proto/events.h"
#include "wb/proto/rundir.h"

using nlohmann::json;

#include "../support/rank_processes.h"
#include "../support/machine.h"

namespace {

using wb::test::processesMentioning;

using wb::test::haveFashionMnist;

std::vector<json> eventsOf(const QByteArray& bytes) {
  std::vector<json> out;
  for (const auto& line : bytes.split('\n'))
    if (auto ev = wb::proto::decodeEvent(line.toStdString())) out.push_back(*ev);
  return out;
}

// A rank's pid, as the run's env.json gives it (rank_pids: a rank started warm runs under the
// command's name, not `worker`), once that process is alive; 0 if none.
int rankPid(const std::string& runDir, int rank) {
  std::ifstream in(runDir + "/env.json");
  const json env = json::parse(in, nullptr, false);
  if (!env.is_object() || !env.contains("rank_pids") || !env["rank_pids"].is_array() || env["rank_pids"].size() <= size_t(rank))
    return 0;
  const int pid = env["rank_pids"][size_t(rank)].get<int>();
  return pid > 0 && ::kill(pid, 0) == 0 ? pid : 0;
}

// The TCP sockets `pid` listens on beyond loopback, as "address:port" hex from /proc/net/tcp{,6}
// (matched to the process through its fds' socket inodes).
QStringList nonLoopbackListeners(int pid) {
  std::set<std::string> inodes;
  const std::string fdDir = "/proc/" + std::to_string(pid) + "/fd";
  if (DIR* d = ::opendir(fdDir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      char target[128] = {};
      if (::readlink((fdDir + "/" + e->d_name).c_str(), target, sizeof target - 1) <= 0) continue;
      const std::string t = target;
      if (t.rfind("socket:[", 0) == 0) inodes.insert(t.substr(8, t.size() - 9));
    }
    ::closedir(d);
  }
  QStringList found;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string slot, local, remote, state, queues, timer, retr, uid, timeout, inode;
      f >> slot >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode;
      const std::string addr = local.substr(0, local.find(':'));
      const bool loopback = addr == "0100007F" || addr == "00000000000000000000000001000000";
      if (state == "0A" && inodes.count(inode) && !loopback) found << QString::fromStdString(local);
    }
  }
  return found;
}

QStringList sets(std::initializer_list<const char*> kvs) {
  QStringList s;
  for (const char* kv : kvs) s << QStringLiteral("--set") << QString::fromLatin1(kv);
  return s;
}

}  // namespace

class TestCliDist : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void twoRanksZero2TrainToTheSingleProcessBand() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH),
            QStringList{QStringLiteral("run"), QStringLiteral("--runs-root"), root.path(), QStringLiteral("--events-stdout")} +
                sets({"speedups.devices=2", "speedups.sharding=zero2", "data.limit_train=6000", "data.limit_val=1000",
                      "optim.name=adam", "optim.lr=0.002", "train.epochs=2", "train.log_every=10"}));
    QVERIFY(p.waitForFinished(600000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    auto events = eventsOf(p.readAllStandardOutput());
    int starts = 0;
    double acc = 0;
    int64_t parameters = 0;
    std::map<int, int64_t> stateBytes;  // rank -> optimiser state it holds
    for (const auto& e : events) {
      const std::string type = e.value("type", "");
      if (type == "step" && e.contains("comm") && e["comm"].value("optimizer_state_bytes", int64_t{0}) > 0)
        stateBytes[e["rank"].get<int>()] = e["comm"]["optimizer_state_bytes"].get<int64_t>();
      if (type == "start") {
        ++starts;
        parameters = e["model"]["parameters"].get<int64_t>();
        QCOMPARE(e["world_size"].get<int>(), 2);
        QVERIFY(e["speedups"]["sharding"]["active"].get<bool>());
        // Gloo emulates reduce-scatter: the start event says the gradient saving does not apply.
        QCOMPARE(e["speedups"]["sharding"]["gradient_memory_saved"].get<bool>(), false);
      }
      if (type == "step" && e["rank"].get<int>() == 0) {
        QVERIFY(e["comm"]["bytes_reduced"].get<int64_t>() > 0);
        QVERIFY(e["ms"]["comm"].get<double>() > 0);
      }
      if (type == "eval" && e["rank"].get<int>() == 0) acc = e["val_acc"].get<double>();
    }
    QCOMPARE(starts, 2);
    QVERIFY2(acc >= 0.70, std::to_string(acc).c_str());
    // Each rank holds Adam's two fp32 values for half of lenet's parameters, to one element
    // (ZeRO splits tensors between ranks; by whole tensors the halves were uneven).
    QCOMPARE(int(stateBytes.size()), 2);
    for (const auto& [rank, bytes] : stateBytes)
      QVERIFY2(std::llabs(2 * bytes - 8 * parameters) <= 8,
               qPrintable(QStringLiteral("rank %1 holds %2 bytes of %3").arg(rank).arg(bytes).arg(8 * parameters)));
  }

  void killingRank1FailsTheRunNamingItAndLeavesNoProcess() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString runDir = root.filePath(QStringLiteral("killed-run"));
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH),
            QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), runDir, QStringLiteral("--events-stdout")} +
                sets({"speedups.devices=2", "model.name=mnist-cnn", "train.log_every=2", "train.epochs=2"}));
    QByteArray out;
    QTRY_VERIFY_WITH_TIMEOUT((out += p.readAllStandardOutput(), out.contains("\"type\":\"step\"")), 300000);
    const int rank1Pid = rankPid(runDir.toStdString(), 1);
    QVERIFY(rank1Pid > 0);
    QElapsedTimer sinceKill;
    sinceKill.start();
    ::kill(rank1Pid, SIGKILL);
    QVERIFY(p.waitForFinished(120000));
    QVERIFY2(sinceKill.elapsed() < 60000, "the run did not end within 60 s of rank 1's death");
    out += p.readAllStandardOutput();
    QCOMPARE(p.exitCode(), 1);
    auto events = eventsOf(out);
    QVERIFY(!events.empty());
    const json& end = events.back();
    QCOMPARE(end["type"].get<std::string>(), std::string("end"));
    QCOMPARE(end["status"].get<std::string>(), std::string("failed"));
    QCOMPARE(end["summary"]["failed_rank"].get<int>(), 1);
    QVERIFY2(end["summary"]["error"].get<std::string>().find("rank 1") != std::string::npos, end.dump().c_str());
    // Events so far are kept; summary written; no rank left behind.
    auto fileEvents = wb::proto::readEventsFile(wb::proto::RunDir{runDir.toStdString()}.events().string());
    QCOMPARE(fileEvents.size(), events.size());
    QVERIFY(wb::proto::readJsonFile(wb::proto::RunDir{runDir.toStdString()}.summary()).ok());
    QTRY_COMPARE_WITH_TIMEOUT(processesMentioning(runDir.toStdString()), 0, 30000);
  }
  // Rank 1 stops answering (SIGSTOP) while rank 0 waits for it in a collective: after
  // --collective-timeout rank 0 gives up, and the run names rank 1, the stalled one, as the
  // failed rank (not rank 0, the healthy one that reported the timeout), says it stalled rather
  // than died, names each rank once per message, and kills it (SIGTERM does not reach a stopped
  // process). (A ptrace-held rank is not tried here: its death is reported to the tracer, this
  // test, before its launcher could reap it.)
  void aStalledRankIsNamed() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString runDir = root.filePath(QStringLiteral("stalled-run"));
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH),
            QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), runDir, QStringLiteral("--events-stdout"),
                        QStringLiteral("--collective-timeout"), QStringLiteral("6")} +
                sets({"speedups.devices=2", "data.limit_train=20000", "data.limit_val=256", "train.epochs=3",
                      "train.log_every=1"}));
    QByteArray out;
    QTRY_VERIFY_WITH_TIMEOUT((out += p.readAllStandardOutput(), out.contains("\"type\":\"step\"")), 300000);
    const int rank1 = rankPid(runDir.toStdString(), 1);
    QVERIFY(rank1 > 0);
    wb::test::KillOnExit guard{{rank1}};
    ::kill(rank1, SIGSTOP);
    QVERIFY(p.waitForFinished(120000));
    out += p.readAllStandardOutput();
    QVERIFY2(p.exitCode() == 1, out.right(2000).constData());
    const json end = eventsOf(out).back();
    QCOMPARE(end["type"].get<std::string>(), std::string("end"));
    QCOMPARE(end["status"].get<std::string>(), std::string("failed"));
    const json& summary = end["summary"];
    QCOMPARE(summary["failed_rank"].get<int>(), 1);
    QCOMPARE(summary.value("failed_rank_stalled", false), true);
    const std::string error = summary["error"].get<std::string>();
    QVERIFY2(error.rfind("rank 1 stalled (stopped, no event for ", 0) == 0, error.c_str());
    QVERIFY2(error.find("rank 0: rank 0") == std::string::npos, error.c_str());
    QVERIFY2(error.find("(rank 0: ") != std::string::npos, error.c_str());  // what the waiting rank reported is kept
    QTRY_COMPARE_WITH_TIMEOUT(processesMentioning(runDir.toStdString()), 0, 30000);
  }

  // Stop (the window's Stop is SIGTERM to the launcher) must end every rank at the same step:
  // a rank that stops alone leaves the other in a collective (Gloo "connection reset", no
  // checkpoint). The launcher rows repeat because that race is timing-dependent; the rank-1 row
  // is the race's extreme (one rank sees the signal, the other never does), deterministic.
  void stopEndsEveryRankAtTheSameStep_data() {
    QTest::addColumn<bool>("onlyRank1");
    for (int i = 1; i <= 5; ++i) QTest::addRow("sigterm to the launcher, try %d", i) << false;
    QTest::newRow("sigterm to rank 1 only") << true;
  }
  void stopEndsEveryRankAtTheSameStep() {
    WB_NEED(wb::test::missingFashionMnist());
    QFETCH(bool, onlyRank1);
    QTemporaryDir root;
    const QString runDir = root.filePath(QStringLiteral("stopped-run"));
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH),
            QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), runDir, QStringLiteral("--events-stdout"),
                        QStringLiteral("--collective-timeout"), QStringLiteral("60")} +
                sets({"speedups.devices=2", "data.limit_train=20000", "data.limit_val=256", "train.epochs=3",
                      "train.log_every=1"}));
    QByteArray out;
    QTRY_VERIFY_WITH_TIMEOUT((out += p.readAllStandardOutput(), out.contains("\"type\":\"step\"")), 300000);
    const int target = onlyRank1 ? rankPid(runDir.toStdString(), 1) : static_cast<int>(p.processId());
    QVERIFY(target > 0);
    ::kill(target, SIGTERM);
    QVERIFY(p.waitForFinished(120000));
    out += p.readAllStandardOutput();
    QVERIFY2(p.exitCode() == 130, out.right(2000).constData());
    const json end = eventsOf(out).back();
    QCOMPARE(end["type"].get<std::string>(), std::string("end"));
    QCOMPARE(end["status"].get<std::string>(), std::string("cancelled"));
    const wb::proto::RunDir run{runDir.toStdString()};
    auto summary = wb::proto::readJsonFile(run.summary());
    QVERIFY(summary.ok());
    QCOMPARE((*summary)["status"].get<std::string>(), std::string("cancelled"));
    QVERIFY(QFile::exists(QString::fromStdString(run.lastCheckpoint().string())));
  }

  // A run the launcher starts on one machine listens on nothing beyond loopback: its ranks meet
  // through a FileStore in the run folder (no TCPStore on ::), and the run still ends ok.
  void aLocalRunListensOnlyOnLoopback() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString runDir = root.filePath(QStringLiteral("local-run"));
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH),
            QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), runDir, QStringLiteral("--events-stdout")} +
                sets({"speedups.devices=2", "data.limit_train=20000", "data.limit_val=256", "train.epochs=1",
                      "train.max_steps=200", "train.log_every=1"}));
    QByteArray out;
    QTRY_VERIFY_WITH_TIMEOUT((out += p.readAllStandardOutput(), out.contains("\"type\":\"step\"")), 300000);
    for (int rank : {0, 1}) {
      const int pid = rankPid(runDir.toStdString(), rank);
      QVERIFY2(pid > 0, "the rank ended before its sockets could be read");
      const QStringList listening = nonLoopbackListeners(pid);
      QVERIFY2(listening.isEmpty(), qPrintable(QStringLiteral("rank %1 listens on %2").arg(rank).arg(listening.join(u' '))));
    }
    QVERIFY(p.waitForFinished(300000));
    out += p.readAllStandardOutput();
    QVERIFY2(p.exitCode() == 0, out.right(2000).constData());
    QCOMPARE(eventsOf(out).back()["status"].get<std::string>(), std::string("ok"));
    QVERIFY(!QFile::exists(runDir + QStringLiteral("/.rendezvous")));
  }
};

QTEST_GUILESS_MAIN(TestCliDist)
#include "test_cli_dist.moc"
