// launchCommand on real shell commands: the run folder a command writes is read back as its
// outcome; a command that fails, writes nothing, hangs or is stopped ends failed (or cancelled)
// with an error naming the arm, the command and its last output; what it wrote is kept, and a
// folder that holds a run is never replaced.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <fstream>
#include <thread>

#include "../../support/rank_processes.h"
#include "wb/launch/command_run.h"
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

// A run folder as the recorder leaves it, written by the shell through $WB_RUN_DIR.
const char* kWritesARun =
    "cd \"$WB_RUN_DIR\" && echo '{\"name\":\"sh-run\"}' > config.json && "
    "echo '{\"v\":1,\"type\":\"run\",\"rank\":-1,\"t\":0}' > events.jsonl && "
    "echo '{\"status\":\"ok\",\"best_val_acc\":0.5}' > summary.json && echo trained";

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
