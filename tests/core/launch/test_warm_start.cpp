// Warm starts (wb/launch/warm_start.h) on their own: this test binary starts the warm server
// first thing in main, and launchRun with this binary as the CLI then forks its ranks from it. The
// rank here is a stand-in (standInRank: a few events, then as the test's mode says), so that what
// is checked is the start: a rank forked warm is the launcher's own child (its parent, its CPU
// time, its exit), shows its own arguments in /proc/PID/cmdline, ends cancelled on a stop, and a
// process it leaves is ended; another binary's ranks are exec'd cold, as before.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "wb/common/config.h"
#include "wb/launch/launcher.h"
#include "wb/launch/warm_start.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool inTheTestProcess = false;  // set before the server forks: a warm rank has it, an exec'd one not
std::atomic<bool> terminated{false};

void say(const json& ev) {
  std::printf("%s\n", wb::proto::encodeEvent(ev).c_str());
  std::fflush(stdout);
}

std::string ownCmdline() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), {});
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& c : s)
    if (c == '\0') c = ' ';
  return s;
}

// What the launcher starts as `<this binary> worker ...`: says how it was started, then as
// WB_TEST_RANK says: "ok" ends ok, "wait" waits for SIGTERM and ends cancelled, "leave" starts a
// process it leaves running and ends ok.
int standInRank(int argc, char** argv) {
  const std::string mode = std::getenv("WB_TEST_RANK") ? std::getenv("WB_TEST_RANK") : "ok";
  if (mode == "wait") ::signal(SIGTERM, [](int) { terminated = true; });
  std::string args;
  for (int i = 0; i < argc; ++i) args += (i ? " " : "") + std::string(argv[i]);
  say(wb::proto::toEvent(wb::proto::WarningEvent{"warm=" + std::to_string(inTheTestProcess) + " parent=" +
                                                     std::to_string(::getppid()) + " rank=" + std::getenv("RANK"),
                                                 std::nullopt},
                         0, 0.0));
  say(wb::proto::toEvent(wb::proto::WarningEvent{"cmdline=" + ownCmdline() + "|args=" + args, std::nullopt}, 0, 0.0));
  std::fprintf(stderr, "the stand-in rank's log line\n");
  wb::proto::EndEvent end;
  end.status = "ok";
  if (mode == "wait") {
    for (int i = 0; i < 3000 && !terminated; ++i) ::usleep(10000);
    end.status = terminated ? "cancelled" : "failed";
  } else if (mode == "leave" && ::fork() == 0) {
    ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  end.summary.status = end.status;
  say(wb::proto::toEvent(end, 0, 0.1));
  return end.status == "ok" ? 0 : end.status == "cancelled" ? 130 : 1;
}

wb::Config oneRank() {
  wb::Config c;
  c.name = "warm-start-test";
  c.speedups.devices = 1;
  return c;
}

std::string selfExe() { return fs::read_symlink("/proc/self/exe").string(); }

struct Launched {
  wb::launch::RunOutcome out;
  std::vector<std::string> warnings;
  std::string error;
};

Launched launch(const std::string& cli, const fs::path& dir, const char* mode) {
  ::setenv("WB_TEST_RANK", mode, 1);
  wb::launch::LaunchOptions o;
  o.cli_path = cli;
  o.run_dir = dir.string();
  o.kill_grace_s = 2;
  Launched l;
  o.on_event = [&](const json& ev) {
    if (ev.value("type", std::string()) == "warning") l.warnings.push_back(ev.value("message", std::string()));
    if (ev.value("type", std::string()) == "warning" && ev.value("message", std::string()).rfind("cmdline=", 0) == 0 &&
        std::string(mode) == "wait")
      wb::launch::requestStop();
  };
  auto out = wb::launch::launchRun(oneRank(), o);
  if (out.ok()) l.out = *out;
  else l.error = out.error().message;
  return l;
}

bool saidWith(const Launched& l, const std::string& text) {
  for (const auto& w : l.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

class TestWarmStart : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void init() { QVERIFY2(wb::launch::warmServerRunning(), "the warm server started in main"); }

  void aRankOfThisBinaryStartsWarmAsTheLaunchersChild() {
    QTemporaryDir root;
    const fs::path dir = root.filePath(QStringLiteral("run")).toStdString();
    const Launched l = launch(selfExe(), dir, "ok");
    QVERIFY2(l.error.empty(), l.error.c_str());
    QCOMPARE(l.out.status, std::string("ok"));
    QVERIFY2(saidWith(l, "warm=1 parent=" + std::to_string(::getpid()) + " rank=0"), l.warnings.front().c_str());
    // Its cmdline is its own arguments, as exec would show them.
    std::string cmdline;
    for (const auto& w : l.warnings)
      if (w.rfind("cmdline=", 0) == 0) cmdline = w;
    const auto bar = cmdline.find("|args=");
    QVERIFY2(bar != std::string::npos && cmdline.substr(8, bar - 8) == cmdline.substr(bar + 6), cmdline.c_str());
    QVERIFY2(cmdline.find(" worker --config ") != std::string::npos, cmdline.c_str());
    std::ifstream log(dir / "logs" / "rank-0.log");
    const std::string text((std::istreambuf_iterator<char>(log)), {});
    QVERIFY2(text.find("the stand-in rank's log line") != std::string::npos, text.c_str());
    QVERIFY(fs::exists(dir / "summary.json"));
  }

  void aStopEndsAWarmRankCancelled() {
    QTemporaryDir root;
    const Launched l = launch(selfExe(), root.filePath(QStringLiteral("stopped")).toStdString(), "wait");
    QVERIFY2(l.error.empty(), l.error.c_str());
    QVERIFY(saidWith(l, "warm=1"));
    QCOMPARE(l.out.status, std::string("cancelled"));
  }

  void aProcessAWarmRankLeavesIsEnded() {
    QTemporaryDir root;
    const Launched l = launch(selfExe(), root.filePath(QStringLiteral("left")).toStdString(), "leave");
    QVERIFY2(l.error.empty(), l.error.c_str());
    QVERIFY(saidWith(l, "warm=1"));
    QVERIFY2(saidWith(l, "`sleep 60`; ended"), l.warnings.back().c_str());
  }

  // A copy of this binary is another program: its ranks are exec'd, cold.
  void anotherBinaryStartsCold() {
    QTemporaryDir root;
    const fs::path copy = root.filePath(QStringLiteral("copy")).toStdString();
    fs::copy_file(selfExe(), copy);
    fs::permissions(copy, fs::perms::owner_all);
    const Launched l = launch(copy.string(), root.filePath(QStringLiteral("cold")).toStdString(), "ok");
    QVERIFY2(l.error.empty(), l.error.c_str());
    QCOMPARE(l.out.status, std::string("ok"));
    QVERIFY2(saidWith(l, "warm=0 parent=" + std::to_string(::getpid())), l.warnings.front().c_str());
  }
};

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "worker") return standInRank(argc, argv);  // exec'd: cold
  inTheTestProcess = true;
  if (!wb::launch::startWarmServer(&standInRank, argc, argv)) std::fprintf(stderr, "the warm server did not start\n");
  TestWarmStart test;
  const int rc = QTest::qExec(&test, argc, argv);
  wb::launch::stopWarmServer();
  return rc;
}

#include "test_warm_start.moc"
