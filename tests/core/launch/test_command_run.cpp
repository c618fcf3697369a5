// launchCommand on real shell commands: the run folder a command writes is read back as its
// outcome; a command that fails, writes nothing, hangs or is stopped ends failed (or cancelled)
// with an error naming the arm, the command and its last output; what it wrote is kept, and a
// folder that holds a run is never replaced.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <signal.h>

#include <cerrno>
#include <fstream>
#include <thread>

#include "../../support/rank_processes.h"
#include "wb/launch/command_run.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"

namespace fs = std::filesystem;
using wb::launch::CommandOptions;
using wb::launch::launchCommand;

namespace {

CommandOptions optionsFor(const QTemporaryDir& dir, const char* name) {
  CommandOptions o;
  o.run_dir = dir.filePath(QString::fromLatin1(name)).toStdString();
  o.arm = "variant, pair 1";
  o.kill_grace_s = 2;
  return o;
}

bool contains(const std::optional<std::string>& text, const std::string& part) {
  return text && text->find(part) != std::string::npos;
}

// The pid a command wrote to FILE in its run folder (0 when it wrote none).
pid_t pidIn(const CommandOptions& o, const char* file) {
  std::ifstream in(fs::path(o.run_dir) / file);
  long pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}

// Gone for good: no such process (a zombie would still answer; it was reaped).
bool gone(pid_t pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH; }

// A helper a failing test leaves running is killed on the way out (never pid 0, our own group,
// nor a process that took its pid since).
struct KillIfLeft {
  pid_t pid;
  ~KillIfLeft() {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::string cmd;
    std::getline(in, cmd);
    if (pid > 0 && cmd.rfind("sleep", 0) == 0) ::kill(pid, SIGKILL);
  }
};

// The messages of the warning events among `events`.
std::vector<std::string> warningsIn(const std::vector<nlohmann::json>& events) {
  std::vector<std::string> out;
  for (const auto& ev : events)
    if (wb::proto::stringOr(ev, "type", "") == "warning") out.push_back(wb::proto::stringOr(ev, "message", ""));
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// A run folder as the recorder leaves it, written by the shell through $WB_RUN_DIR.
const char* kWritesARun =
    "cd \"$WB_RUN_DIR\" && echo '{\"name\":\"sh-run\"}' > config.json && "
    "echo '{\"v\":1,\"type\":\"run\",\"rank\":-1,\"t\":0}' > events.jsonl && "
    "echo '{\"status\":\"ok\",\"best_val_acc\":0.5}' > summary.json && echo trained";

// Waits until the background helper ($!) has left the session: setsid has made its own and
// become `sleep` (until then it is still the command's, and ends with it unnamed).
const char* kUntilItLeft = "until [ \"$(head -c 5 /proc/$!/cmdline)\" = sleep ]; do sleep 0.01; done";

}  // namespace

class TestCommandRun : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private Q_SLOTS:
  void theFolderTheCommandWroteIsItsOutcome() {
    const auto o = optionsFor(dir_, "ok");
    auto out = launchCommand(kWritesARun, o);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->status, std::string("ok"));
    QCOMPARE(out->exit_code, 0);
    QCOMPARE(out->summary.best_val_acc.value_or(0), 0.5);
    std::ifstream log(fs::path(o.run_dir) / "logs" / "command.log");
    std::string line;
    std::getline(log, line);
    QCOMPARE(line, std::string("trained"));  // the command's output is kept beside the run
  }

  void aCommandThatWritesNoRunFailsNamingArmCommandAndOutput() {
    const auto o = optionsFor(dir_, "nothing");
    auto out = launchCommand("echo 'ImportError: no module named torch' >&2; exit 3", o);
    QVERIFY(out.ok());
    QCOMPARE(out->status, std::string("failed"));
    const auto& e = out->summary.error;
    QVERIFY2(contains(e, "variant, pair 1") && contains(e, "exit 3") && contains(e, "exited with code 3") &&
                 contains(e, "ImportError: no module named torch") && contains(e, "without writing a run folder") &&
                 contains(e, "{run_dir}"),
             e.value_or("").c_str());
    QVERIFY(!fs::exists(fs::path(o.run_dir) / "summary.json"));  // not a run: nothing pretends it is
  }

  // A run that started and died leaves its events; the folder gains the end it lacked.
  void aCrashAfterTheRunStartedKeepsItsEventsAndGainsAnEnd() {
    const auto o = optionsFor(dir_, "crash");
    auto out = launchCommand(
        "cd \"$WB_RUN_DIR\" && echo '{}' > config.json && echo '{\"v\":1,\"type\":\"run\",\"rank\":-1,\"t\":0}' > events.jsonl && "
        "kill -SEGV $$",
        o);
    QVERIFY(out.ok());
    QCOMPARE(out->status, std::string("failed"));
    QVERIFY2(contains(out->summary.error, "killed by signal 11"), out->summary.error.value_or("").c_str());
    auto summary = wb::proto::readJsonFile(fs::path(o.run_dir) / "summary.json");
    QVERIFY(summary.ok());
    QCOMPARE(summary->value("status", ""), std::string("failed"));
    std::ifstream events(fs::path(o.run_dir) / "events.jsonl");
    std::string first;
    std::getline(events, first);
    QVERIFY(first.find("\"run\"") != std::string::npos);
  }

  // No new byte in events.jsonl or the output for idle_timeout_s: stopped, with what it started.
  void aHangingCommandIsStoppedWithItsChildren() {
    auto o = optionsFor(dir_, "hang");
    o.idle_timeout_s = 1;
    auto out = launchCommand("echo started; sleep 37.25 & wait", o);
    QVERIFY(out.ok());
    QCOMPARE(out->status, std::string("failed"));
    QVERIFY2(contains(out->summary.error, "wrote nothing for 1 s"), out->summary.error.value_or("").c_str());
    const auto left = wb::test::pidsWhoseCommandLine([](const std::string& cmd) { return cmd.find("37.25") != std::string::npos; });
    QVERIFY2(left.empty(), "the command's own child outlived the stop");
  }

  void aStopCancelsIt() {
    const auto o = optionsFor(dir_, "stopped");
    const fs::path marker = fs::path(o.run_dir) / "logs" / "command.log";
    std::thread stopper([&] {
      for (int i = 0; i < 300 && !(fs::exists(marker) && fs::file_size(marker) > 0); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      wb::launch::requestStop();
    });
    auto out = launchCommand("echo running; sleep 41.5", o);
    stopper.join();
    QVERIFY(out.ok());
    QCOMPARE(out->status, std::string("cancelled"));
    QCOMPARE(out->exit_code, 130);
  }

  // A helper the command started in the background (a DataLoader worker, a logger's process)
  // is still in its session when it exits: ended with it, silently.
  void aHelperLeftInItsSessionEndsWithTheCommand() {
    auto o = optionsFor(dir_, "helper");
    std::vector<nlohmann::json> streamed;
    o.on_event = [&](const nlohmann::json& ev) { streamed.push_back(ev); };
    auto out = launchCommand(std::string(kWritesARun) + "; sleep 300.125 & echo $! > helper.pid", o);
    const KillIfLeft cleanup{pidIn(o, "helper.pid")};
    QVERIFY(out.ok());
    QCOMPARE(out->status, std::string("ok"));
    QVERIFY2(pidIn(o, "helper.pid") > 0, "the command did not start its helper");
    QVERIFY2(gone(pidIn(o, "helper.pid")), "the helper outlived the run");
    QVERIFY2(warningsIn(streamed).empty(), joined(warningsIn(streamed)).c_str());  // nothing escaped
  }

  // One that left the session (setsid) is found all the same, ended, and named in a warning: in
  // the stream and in the run's own events.
  void aHelperThatLeftTheSessionIsNamedAndEnded() {
    auto o = optionsFor(dir_, "escaped");
    std::vector<nlohmann::json> streamed;
    o.on_event = [&](const nlohmann::json& ev) { streamed.push_back(ev); };
    auto out = launchCommand(std::string(kWritesARun) + "; setsid sleep 300.25 & echo $! > helper.pid; " + kUntilItLeft, o);
    const pid_t helper = pidIn(o, "helper.pid");
    const KillIfLeft cleanup{helper};
    QVERIFY(out.ok());
    QCOMPARE(out->status, std::string("ok"));
    QVERIFY2(gone(helper), "the helper that left the session outlived the run");
    const std::string said = joined(warningsIn(streamed));
    QVERIFY2(said.find("pid " + std::to_string(helper) + " `sleep 300.25`") != std::string::npos &&
                 said.find("left its session") != std::string::npos && said.find("ended") != std::string::npos,
             said.c_str());
    const auto filed = warningsIn(wb::proto::readEventsFile((fs::path(o.run_dir) / "events.jsonl").string()));
    QVERIFY2(joined(filed).find("`sleep 300.25`") != std::string::npos, joined(filed).c_str());
  }

  // A stopped command's escaped helper: the same.
  void aStoppedCommandsEscapedHelperIsNamedAndEnded() {
    auto o = optionsFor(dir_, "stopped-escaped");
    std::vector<nlohmann::json> streamed;
    o.on_event = [&](const nlohmann::json& ev) { streamed.push_back(ev); };
    const fs::path marker = fs::path(o.run_dir) / "logs" / "command.log";
    std::thread stopper([&] {
      for (int i = 0; i < 300 && !(fs::exists(marker) && fs::file_size(marker) > 0); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      wb::launch::requestStop();
    });
    auto out = launchCommand(
        std::string("setsid sleep 300.375 & echo $! > \"$WB_RUN_DIR/helper.pid\"; ") + kUntilItLeft + "; echo running; sleep 41.75", o);
    stopper.join();
    const pid_t helper = pidIn(o, "helper.pid");
    const KillIfLeft cleanup{helper};
    QVERIFY(out.ok());
    QCOMPARE(out->status, std::string("cancelled"));
    QVERIFY2(gone(helper), "the stopped command's escaped helper outlived it");
    const std::string said = joined(warningsIn(streamed));
    QVERIFY2(said.find("pid " + std::to_string(helper) + " `sleep 300.375`") != std::string::npos, said.c_str());
  }

  // A step or eval line whose figures cannot be read is skipped with a warning naming the line,
  // not streamed as a NaN loss or accuracy.
  void unreadableStepAndEvalLinesAreSkippedWithANote() {
    auto o = optionsFor(dir_, "malformed");
    const std::string lines = (fs::path(dir_.path().toStdString()) / "malformed-events.jsonl").string();
    {
      std::ofstream f(lines);
      f << R"({"v":1,"type":"run","rank":-1,"t":0})" "\n"
        << R"({"v":1,"type":"step","rank":0,"t":1,"step":10,"loss":0.5})" "\n"
        << R"({"v":1,"type":"step","rank":0,"t":2,"step":20,"loss":"low"})" "\n"
        << R"({"v":1,"type":"step","rank":0,"t":3,"step":30})" "\n"
        << R"({"v":1,"type":"eval","rank":0,"t":4,"epoch":1})" "\n"
        << R"({"v":1,"type":"step","rank":0,"t":5,"step":40,"loss":null})" "\n";
    }
    std::vector<nlohmann::json> streamed;
    o.on_event = [&](const nlohmann::json& ev) { streamed.push_back(ev); };
    auto out = launchCommand("cp '" + lines + "' \"$WB_RUN_DIR/events.jsonl\" && echo '{\"status\":\"ok\"}' > \"$WB_RUN_DIR/summary.json\"", o);
    QVERIFY(out.ok());
    std::vector<int64_t> steps;
    for (const auto& ev : streamed) {
      const std::string type = wb::proto::stringOr(ev, "type", "");
      QVERIFY2(type != "eval", ev.dump().c_str());
      if (type == "step") steps.push_back(wb::proto::intOr(ev, "step", -1));
    }
    QCOMPARE(steps, (std::vector<int64_t>{10, 40}));  // a null loss is a NaN the writer knew of: kept
    const std::string said = joined(warningsIn(streamed));
    QVERIFY2(said.find("line 3 skipped, a step event's \"loss\" is \"low\", not a number:") != std::string::npos &&
                 said.find("line 4 skipped, a step event without \"loss\":") != std::string::npos &&
                 said.find("line 5 skipped, an eval event with neither") != std::string::npos,
             said.c_str());
  }

  void aFolderHoldingARunIsNeverReplaced() {
    const auto o = optionsFor(dir_, "ok");  // the first test's finished run
    const auto before = wb::proto::readJsonFile(fs::path(o.run_dir) / "summary.json");
    auto out = launchCommand("echo '{\"status\":\"failed\"}' > \"$WB_RUN_DIR/summary.json\"", o);
    QVERIFY(!out.ok());
    QVERIFY2(out.error().message.find("holds a run already") != std::string::npos, out.error().message.c_str());
    QCOMPARE(*wb::proto::readJsonFile(fs::path(o.run_dir) / "summary.json"), *before);
  }
};

QTEST_GUILESS_MAIN(TestCommandRun)
#include "test_command_run.moc"
