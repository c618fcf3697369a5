// core/launch on its own: launchRun spawning real `workbench-cli worker` ranks (the CLI this
// build made) into a real run folder. A rank that fails (a real process that exits or is killed
// before training) tears the others down and the folder says which; events of two ranks are
// merged in arrival order, each rank's in its own order, and the folder holds what was streamed.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <dirent.h>
#include <signal.h>

#include <cerrno>

#include <fstream>
#include <map>

#include "wb/common/config.h"
#include "wb/launch/launcher.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"

using nlohmann::json;
namespace fs = std::filesystem;

#include "../../support/busy_processes.h"
#include "../../support/rank_processes.h"
#include "../../support/machine.h"

namespace {

using wb::test::processesMentioning;

using wb::test::haveFashionMnist;

wb::Config smallConfig(int devices) {
  wb::Config c;
  c.name = "launcher-test";
  c.data.limit_train = 2000;
  c.data.limit_val = 256;
  c.train.log_every = 5;
  c.speedups.devices = devices;
  return c;
}

// A rank program: a shell script that fails as rank `rank` (the script's body) and is the real
// workbench-cli for every other rank.
QString rankProgram(const QTemporaryDir& dir, int rank, const QString& body) {
  const QString path = dir.filePath(QStringLiteral("rank-program.sh"));
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return {};
  f.write(QStringLiteral("#!/bin/sh\nif [ \"$RANK\" = %1 ]; then %2; fi\nexec '%3' \"$@\"\n")
              .arg(rank)
              .arg(body, QStringLiteral(WB_CLI_PATH))
              .toUtf8());
  f.close();
  f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
  return path;
}

}  // namespace

class TestLauncher : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void twoRanksMergeTheirEventsInOrder() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    wb::launch::LaunchOptions o;
    o.cli_path = WB_CLI_PATH;
    o.run_dir = root.filePath(QStringLiteral("merged")).toStdString();
    std::vector<json> streamed;
    o.on_event = [&](const json& ev) { streamed.push_back(ev); };
    auto out = wb::launch::launchRun(smallConfig(2), o);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->status, std::string("ok"));
    QCOMPARE(out->exit_code, 0);
    QVERIFY(streamed.size() > 4);
    QCOMPARE(wb::proto::stringOr(streamed.front(), "type", ""), std::string("run"));
    QCOMPARE(wb::proto::stringOr(streamed.back(), "type", ""), std::string("end"));
    std::map<int64_t, int64_t> lastStep;  // rank -> its last step seen
    std::map<int64_t, int> starts;
    int ends = 0;
    for (const auto& ev : streamed) {
      const std::string type = wb::proto::stringOr(ev, "type", "");
      const int64_t rank = wb::proto::intOr(ev, "rank", -2);
      ends += type == "end";
      if (type == "start") ++starts[rank];
      if (type != "step") continue;
      const int64_t step = wb::proto::intOr(ev, "step", -1);
      QVERIFY2(step > lastStep[rank], ev.dump().c_str());  // each rank's events keep their order
      lastStep[rank] = step;
    }
    QCOMPARE(ends, 1);  // the launcher writes the run's single end
    QCOMPARE(int(starts.size()), 2);
    QCOMPARE(int(lastStep.size()), 2);
    // The folder holds exactly what was streamed, in the same order.
    const wb::proto::RunDir run{out->run_dir};
    int64_t malformed = -1;
    const auto filed = wb::proto::readEventsFile(run.events().string(), &malformed);
    QCOMPARE(malformed, int64_t(0));
    QCOMPARE(filed.size(), streamed.size());
    for (size_t i = 0; i < filed.size(); ++i)
      QCOMPARE(filed[i].dump(), wb::proto::decodeEvent(wb::proto::encodeEvent(streamed[i]))->dump());
    auto summary = wb::proto::readJsonFile(run.summary());
    QVERIFY(summary.ok());
    QCOMPARE(wb::proto::stringOr(*summary, "status", ""), std::string("ok"));
    QVERIFY(fs::exists(run.env()));
    QVERIFY(fs::exists(run.rankLog(0)) && fs::exists(run.rankLog(1)));
    QVERIFY(!fs::exists(run.rendezvousFile()));
  }

  // Rank 1 fails before it trains (exits 3 with a message, or dies by a signal); rank 0, a
  // real worker waiting for it at the rendezvous, is torn down; the folder names rank 1.
  void aFailingRankTearsDownTheOthers_data() {
    QTest::addColumn<QString>("body");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<int>("exitCode");
    QTest::newRow("exits 3") << QStringLiteral("echo 'rank 1 cannot read its shard' >&2; exit 3")
                             << QStringLiteral("rank 1 exited with code 3") << 3;
    QTest::newRow("killed") << QStringLiteral("echo 'rank 1 is going' >&2; kill -9 $$")
                            << QStringLiteral("rank 1 was killed by signal 9") << 1;
  }
  void aFailingRankTearsDownTheOthers() {
    WB_NEED(wb::test::missingFashionMnist());
    QFETCH(QString, body);
    QFETCH(QString, reason);
    QFETCH(int, exitCode);
    QTemporaryDir root;
    wb::launch::LaunchOptions o;
    o.cli_path = rankProgram(root, 1, body).toStdString();
    o.run_dir = root.filePath(QStringLiteral("torn-down")).toStdString();
    o.kill_grace_s = 2;
    std::vector<json> streamed;
    o.on_event = [&](const json& ev) { streamed.push_back(ev); };
    auto out = wb::launch::launchRun(smallConfig(2), o);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->status, std::string("failed"));
    QCOMPARE(out->exit_code, exitCode);
    QCOMPARE(out->summary.failed_rank, std::optional<int>(1));
    const std::string error = out->summary.error.value_or("");
    QVERIFY2(QString::fromStdString(error).startsWith(reason), error.c_str());
    const std::string tail = out->summary.log_tail.value_or("");
    QVERIFY2(tail.find("rank 1 is going") != std::string::npos || tail.find("cannot read its shard") != std::string::npos,
             wb::proto::toJson(out->summary).dump().c_str());
    const wb::proto::RunDir run{out->run_dir};
    auto summary = wb::proto::readJsonFile(run.summary());
    QVERIFY(summary.ok());
    QCOMPARE(wb::proto::intOr(*summary, "failed_rank", -1), int64_t(1));
    const auto filed = wb::proto::readEventsFile(run.events().string());
    QCOMPARE(wb::proto::stringOr(filed.back(), "status", ""), std::string("failed"));
    QCOMPARE(wb::proto::stringOr(filed[filed.size() - 2], "type", ""), std::string("error"));
    QCOMPARE(processesMentioning(out->run_dir), 0);  // every rank reaped before launchRun returned
  }

  // A process a rank started and left running when it exited (here: its program's own helper,
  // re-parented to the launcher when the rank ended, holding the rank's output open) is ended
  // with the run and named in a warning before the run's end.
  void aProcessARankLeftIsEndedAndNamed() {
    QTemporaryDir root;
    const QString pidFile = root.filePath(QStringLiteral("helper.pid"));
    wb::launch::LaunchOptions o;
    o.cli_path =
        rankProgram(root, 0, QStringLiteral("sleep 300.625 & echo $! > '%1'; exit 3").arg(pidFile)).toStdString();
    o.run_dir = root.filePath(QStringLiteral("left")).toStdString();
    o.kill_grace_s = 2;
    std::vector<json> streamed;
    o.on_event = [&](const json& ev) { streamed.push_back(ev); };
    auto out = wb::launch::launchRun(smallConfig(1), o);
    std::ifstream in(pidFile.toStdString());
    long helper = 0;
    in >> helper;
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->status, std::string("failed"));
    QVERIFY2(helper > 0, "the rank program did not start its helper");
    QVERIFY2(::kill(static_cast<pid_t>(helper), 0) != 0 && errno == ESRCH, "the rank's helper outlived the run");
    std::string said;
    for (const auto& ev : streamed)
      if (wb::proto::stringOr(ev, "type", "") == "warning") said += wb::proto::stringOr(ev, "message", "") + "\n";
    QVERIFY2(said.find("pid " + std::to_string(helper) + " `sleep 300.625`; ended") != std::string::npos, said.c_str());
    QCOMPARE(wb::proto::stringOr(streamed.back(), "type", ""), std::string("end"));  // said before the end
  }

  // A run beside its own experiment's other work (a busy process this one started, as a try's runs
  // side by side) shares the cores with it: that load is counted as shared, never as other load,
  // and never named; an unrelated busy process is the other load, named by its pid.
  void aRunBesideItsExperimentsRunsSharesTheCores() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const pid_t ours = wb::test::ownBusyChild();
    const pid_t other = wb::test::unrelatedBusyProcess();
    QVERIFY(ours > 0 && other > 0);
    wb::launch::LaunchOptions o;
    o.cli_path = WB_CLI_PATH;
    o.run_dir = root.filePath(QStringLiteral("beside")).toStdString();
    wb::Config c = smallConfig(1);
    c.train.threads = 1;
    auto out = wb::launch::launchRun(c, o);
    wb::test::endProcess(ours, true);
    wb::test::endProcess(other, false);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->status, std::string("ok"));
    const wb::proto::RunCpu cpu = out->summary.cpu.value_or(wb::proto::RunCpu{});
    const std::string said = wb::proto::toJson(cpu).dump();
    // The busy child spun through the whole run: its cores are the experiment's, not other load.
    QVERIFY2(cpu.shared_cores.value_or(0) > 0.05, said.c_str());
    QVERIFY2(cpu.shared.value_or(false) == (*cpu.shared_cores >= 0.3), said.c_str());
    if (*cpu.shared) QVERIFY2(cpu.note.value_or("").find("shared the cores with its experiment's other runs") != std::string::npos, said.c_str());
    bool otherNamed = false;
    const auto busiest = cpu.busiest_others.value_or(std::vector<wb::ProcessLoad>{});
    for (const wb::ProcessLoad& l : busiest) {
      QVERIFY2(l.pid != int(ours), said.c_str());
      otherNamed = otherNamed || l.pid == int(other);
    }
    QVERIFY2(otherNamed || busiest.size() == 3, said.c_str());  // named, unless three others were busier
  }

  // A rank program that cannot be executed: the rank's log says so, in words (written between
  // fork and exec with write(2) alone), and the run fails naming rank 0.
  void aRankThatCannotStartIsNamed() {
    QTemporaryDir root;
    wb::launch::LaunchOptions o;
    o.cli_path = root.filePath(QStringLiteral("no-such-cli")).toStdString();
    o.run_dir = root.filePath(QStringLiteral("no-start")).toStdString();
    o.kill_grace_s = 2;
    auto out = wb::launch::launchRun(smallConfig(1), o);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->status, std::string("failed"));
    QCOMPARE(out->summary.failed_rank, std::optional<int>(0));
    const std::string tail = out->summary.log_tail.value_or("");
    QVERIFY2(tail.find("cannot execute " + o.cli_path + ": No such file or directory") != std::string::npos, tail.c_str());
  }

  // requestStop() (what SIGINT/SIGTERM call): the ranks finish their step and the run ends
  // cancelled, exit 130, with its end in the folder.
  void requestStopCancelsTheRun() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    wb::launch::LaunchOptions o;
    o.cli_path = WB_CLI_PATH;
    o.run_dir = root.filePath(QStringLiteral("stopped")).toStdString();
    wb::Config c = smallConfig(1);
    c.data.limit_train = 20000;
    c.train.log_every = 1;
    bool asked = false;  // once: a second request means "kill now"
    o.on_event = [&asked](const json& ev) {
      if (asked || wb::proto::stringOr(ev, "type", "") != "step") return;
      asked = true;
      wb::launch::requestStop();
    };
    auto out = wb::launch::launchRun(c, o);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->status, std::string("cancelled"));
    QCOMPARE(out->exit_code, 130);
    const auto filed = wb::proto::readEventsFile(wb::proto::RunDir{out->run_dir}.events().string());
    QCOMPARE(wb::proto::stringOr(filed.back(), "status", ""), std::string("cancelled"));
  }
};

QTEST_APPLESS_MAIN(TestLauncher)
#include "test_launcher.moc"
