// End to end: `workbench-cli run` as a user runs it — real Fashion-MNIST, real processes, a real
// run directory read back by this (another) process.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "wb/proto/events.h"
#include "wb/proto/rundir.h"

using nlohmann::json;

#include "../support/proc.h"
#include "../support/machine.h"

namespace {

using CliResult = wb::test::ProcResult;

CliResult runCli(const QStringList& args, int timeoutMs = 600000) {
  return wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, timeoutMs);
}

std::vector<json> eventsOf(const QByteArray& stdoutBytes) {
  std::vector<json> out;
  for (const auto& line : stdoutBytes.split('\n'))
    if (auto ev = wb::proto::decodeEvent(line.toStdString())) out.push_back(*ev);
  return out;
}

std::vector<json> ofType(const std::vector<json>& events, const std::string& type) {
  std::vector<json> out;
  for (const auto& e : events)
    if (e.value("type", "") == type) out.push_back(e);
  return out;
}

// Runs the CLI with arguments passed as raw bytes (QProcess would re-encode them as UTF-8).
CliResult runCliRaw(std::vector<std::string> args) {
  args.insert(args.begin(), WB_CLI_PATH);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int err[2];
  if (::pipe(err) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(err[1], 2);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::close(err[0]);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(err[1]);
  CliResult r;
  char buf[4096];
  for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) r.err.append(buf, int(n));
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

QByteArray fileBytes(const std::filesystem::path& path) {
  QFile f(QString::fromStdString(path.string()));
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

QStringList tinyRun(const QString& runDir) {
  return {QStringLiteral("run"), QStringLiteral("--run-dir"), runDir, QStringLiteral("--set"),
          QStringLiteral("data.limit_train=512"), QStringLiteral("--set"), QStringLiteral("data.limit_val=256"),
          QStringLiteral("--set"), QStringLiteral("train.epochs=1")};
}

using wb::test::haveFashionMnist;

double num(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) {
    QTest::qFail(qPrintable(QStringLiteral("summary has no number %1: %2").arg(QString::fromUtf8(key), QString::fromStdString(j.dump()))),
                 __FILE__, __LINE__);
    return std::nan("");
  }
  return j[key].get<double>();
}

// The summary's clocks are each named for what they cover, and agree with each other and with
// the step events: training throughput x training time = the samples trained, the step events'
// time adds up to the training time (evaluation is not in it), and the parts fit in the wholes.
void checkClocks(const json& s, const std::vector<json>& steps) {
  QVERIFY2(!s.contains("samples_per_s"), "the old steps + evaluation samples/s is gone from the summary");
  const double sps = num(s, "train_samples_per_s"), trainS = num(s, "train_s"), samples = num(s, "train_samples");
  QCOMPARE(samples, num(s, "samples"));
  QVERIFY2(std::abs(sps * trainS - samples) <= 1e-6 * samples, qPrintable(QString::number(sps * trainS)));
  double stepTime = 0;
  int64_t previous = 0;
  for (const auto& ev : steps) {
    stepTime += ev["step_ms"].get<double>() / 1000.0 * static_cast<double>(ev["step"].get<int64_t>() - previous);
    previous = ev["step"].get<int64_t>();
  }
  QVERIFY2(std::abs(stepTime - trainS) <= 0.02 * trainS, qPrintable(QStringLiteral("%1 vs %2").arg(stepTime).arg(trainS)));
  const double evalS = num(s, "eval_s"), checkpointS = num(s, "checkpoint_s"), wall = num(s, "wall_s");
  QVERIFY(evalS > 0 && checkpointS > 0);
  QVERIFY2(trainS + evalS + checkpointS <= wall, qPrintable(QString::fromStdString(s.dump())));
  const double first = num(s, "time_to_first_step_s"), runWall = num(s, "run_wall_s");
  QVERIFY(first > 0 && first < runWall && wall < runWall);
  const json& cpu = s["cpu"];
  QVERIFY(cpu.is_object());
  QVERIFY(cpu["cores"].get<int>() >= 1 && cpu["asked_cores"].get<int>() >= 1);
  QVERIFY(cpu["used_cores"].get<double>() > 0 && cpu["other_load_cores"].get<double>() >= 0);
  QCOMPARE(cpu["contended"].get<bool>(), cpu["other_load_cores"].get<double>() >= 0.3);
  for (const auto& ev : steps) {
    QVERIFY(ev["cpu"]["process_cores"].get<double>() >= 0);
    QVERIFY(ev["mem"]["page_faults_per_step"].get<double>() >= 0);
  }
}

}  // namespace

class TestCliRun : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void trainsLenetAndLeavesAParseableRunDirectory() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    auto r = runCli({QStringLiteral("run"), QStringLiteral("--runs-root"), root.path(), QStringLiteral("--events-stdout"),
                     QStringLiteral("--set"), QStringLiteral("data.limit_train=5000"), QStringLiteral("--set"),
                     QStringLiteral("data.limit_val=1000"), QStringLiteral("--set"), QStringLiteral("train.epochs=2"),
                     QStringLiteral("--set"), QStringLiteral("optim.name=adam"), QStringLiteral("--set"),
                     QStringLiteral("optim.lr=0.002"), QStringLiteral("--set"), QStringLiteral("train.log_every=10"),
                     QStringLiteral("--set"), QStringLiteral("speedups.workers=1")});
    QVERIFY2(r.rc == 0, r.err.constData());
    auto events = eventsOf(r.out);
    QVERIFY(!events.empty());
    QCOMPARE(QString::fromStdString(events.front()["type"].get<std::string>()), QStringLiteral("run"));
    const std::string runDir = events.front()["run_dir"].get<std::string>();

    // The stdout stream and events.jsonl hold the same records.
    auto fileEvents = wb::proto::readEventsFile(wb::proto::RunDir{runDir}.events().string());
    QCOMPARE(fileEvents.size(), events.size());
    QCOMPARE(int(ofType(events, "start").size()), 1);
    QCOMPARE(int(ofType(events, "end").size()), 1);
    QCOMPARE(QString::fromStdString(events.back()["type"].get<std::string>()), QStringLiteral("end"));
    auto steps = ofType(events, "step");
    QVERIFY(steps.size() >= 15);  // 2 epochs x 79 steps, one event every 10
    for (const auto& s : steps) {
      QVERIFY(s["loss"].is_number());
      QVERIFY(s["samples_per_s"].get<double>() > 0);
      double parts = 0;
      for (auto& [k, v] : s["ms"].items()) parts += v.get<double>();
      QVERIFY(std::abs(parts - s["step_ms"].get<double>()) <= 0.05 * s["step_ms"].get<double>());
      QVERIFY(s["mem"]["rss"].get<int64_t>() > 0);
    }
    auto evals = ofType(events, "eval");
    QCOMPARE(int(evals.size()), 2);
    QVERIFY2(evals.back()["val_acc"].get<double>() >= 0.70, evals.back().dump().c_str());

    // The `start` event says which speedups are active, and why not.
    auto start = ofType(events, "start").front();
    QCOMPARE(start["speedups"]["workers"]["active"].get<bool>(), true);
    QCOMPARE(start["dataset"]["train"].get<int>(), 5000);

    // summary.json, config.json, env.json and checkpoints are there and parse.
    wb::proto::RunDir run{runDir};
    auto summary = wb::proto::readJsonFile(run.summary());
    QVERIFY(summary.ok());
    QCOMPARE(QString::fromStdString((*summary)["status"].get<std::string>()), QStringLiteral("ok"));
    QVERIFY((*summary)["best_val_acc"].get<double>() >= 0.70);
    checkClocks(*summary, steps);
    auto config = wb::proto::readJsonFile(run.config());
    QVERIFY(config.ok());
    QCOMPARE((*config)["optim"]["name"].get<std::string>(), std::string("adam"));
    QCOMPARE((*config)["train"]["batch_size"].get<int>(), 64);  // defaults filled in
    QVERIFY(wb::proto::readJsonFile(run.env()).ok());
    QVERIFY(QFile::exists(QString::fromStdString(run.lastCheckpoint().string())));
    QVERIFY(QFile::exists(QString::fromStdString(run.bestCheckpoint().string())));
    QVERIFY(QFile::exists(QString::fromStdString(run.rankLog(0).string())));
  }

  void badConfigNamesEveryFieldAndExits2() {
    QTemporaryDir root;
    auto r = runCli({QStringLiteral("run"), QStringLiteral("--runs-root"), root.path(), QStringLiteral("--set"),
                     QStringLiteral("optim.lr=-1"), QStringLiteral("--set"), QStringLiteral("train.batch_size=0")});
    QCOMPARE(r.rc, 2);
    QVERIFY2(r.err.contains("Learning rate (optim.lr): -1"), r.err.constData());
    QVERIFY2(r.err.contains("Batch size (train.batch_size): 0 \u2014 must be in 1..65536"), r.err.constData());
    QVERIFY(QDir(root.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot).isEmpty());  // nothing started
  }

  // Every config problem is named at once with exit 2, whatever the mix, before any run folder
  // exists; nothing ends as an internal error.
  void everyConfigProblemAtOnce_data() {
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<QString>("configFile");  // contents of --config, or empty
    QTest::addColumn<QStringList>("says");
    QTest::newRow("several bad --set") << QStringList{QStringLiteral("optim.lrr=1"), QStringLiteral("train.bach_size=2"),
                                                      QStringLiteral("optim.lr=-1")}
                                       << QString() << QStringList{QStringLiteral("optim.lrr"), QStringLiteral("train.bach_size"),
                                                                   QStringLiteral("Learning rate (optim.lr): -1")};
    // Out of range is refused and named by the field's label and its range, never cut to fit: past
    // the schema's end, past what the C++ type holds, from --set or from the config file.
    const QString epochsRange = QStringLiteral(" \u2014 must be in 1..1000000");
    QTest::newRow("epochs 99999999") << QStringList{QStringLiteral("train.epochs=99999999")} << QString()
                                     << QStringList{QStringLiteral("Epochs (train.epochs): 99999999") + epochsRange};
    QTest::newRow("epochs 99999999 in the file")
        << QStringList() << QStringLiteral(R"({"train":{"epochs":99999999}})")
        << QStringList{QStringLiteral("Epochs (train.epochs): 99999999") + epochsRange};
    QTest::newRow("epochs overflow") << QStringList{QStringLiteral("train.epochs=4294967297")} << QString()
                                     << QStringList{QStringLiteral("Epochs (train.epochs): 4294967297 \u2014 must be an integer in 1..1000000")};
    QTest::newRow("workers 300, momentum 1") << QStringList{QStringLiteral("speedups.workers=300"), QStringLiteral("optim.momentum=1")}
                                             << QString()
                                             << QStringList{QStringLiteral("Loader workers (speedups.workers): 300 \u2014 must be in 0..256"),
                                                            QStringLiteral("Momentum (optim.momentum): 1 \u2014 must be in [0, 1)")};
    QTest::newRow("lr 1e999") << QStringList{QStringLiteral("optim.lr=1e999")} << QString()
                              << QStringList{QStringLiteral("optim.lr"), QStringLiteral("number")};
    QTest::newRow("dataset mnist") << QStringList{QStringLiteral("data.dataset=mnist")} << QString()
                                   << QStringList{QStringLiteral("data.dataset"), QStringLiteral("folder:<dir>")};
    QTest::newRow("unknown key, wrong type, bad value")
        << QStringList{QStringLiteral("train.epochs=0")}
        << QStringLiteral(R"({"optim":{"lrr":0.1,"momentum":"high"},"train":{"batch_size":0}})")
        << QStringList{QStringLiteral("optim.lrr"), QStringLiteral("optim.momentum"), QStringLiteral("train.batch_size"),
                       QStringLiteral("train.epochs")};
    QTest::newRow("malformed JSON") << QStringList() << QStringLiteral("{\n  \"optim\": {\"lr\": 0.1,}\n}\n")
                                    << QStringList{QStringLiteral("exp.json:2:")};
  }
  void everyConfigProblemAtOnce() {
    QFETCH(QStringList, sets);
    QFETCH(QString, configFile);
    QFETCH(QStringList, says);
    QTemporaryDir root;
    QStringList args{QStringLiteral("run"), QStringLiteral("--runs-root"), root.path() + QStringLiteral("/runs")};
    for (const auto& s : sets) args << QStringLiteral("--set") << s;
    args << QStringLiteral("--set") << QStringLiteral("data.limit_train=64") << QStringLiteral("--set")
         << QStringLiteral("data.limit_val=64");
    if (!configFile.isEmpty()) {
      const QString path = root.filePath(QStringLiteral("exp.json"));
      std::ofstream(path.toStdString()) << configFile.toStdString();
      args << QStringLiteral("--config") << path;
    }
    auto r = runCli(args, 120000);
    QVERIFY2(r.rc == 2, r.err.constData());
    for (const auto& s : says) QVERIFY2(r.err.contains(s.toUtf8()), qPrintable(s + QStringLiteral(" not in: ") + QString::fromUtf8(r.err)));
    QVERIFY2(!r.err.contains("internal error"), r.err.constData());
    QVERIFY(!QDir(root.path() + QStringLiteral("/runs")).exists());  // nothing started
  }

  // A folder name that is not UTF-8 would be recorded as U+FFFD, naming no folder: refused.
  void nonUtf8RunDirIsRefused() {
    QTemporaryDir root;
    const std::string dir = root.path().toStdString() + "/x\xE9";
    auto r = runCliRaw({"run", "--run-dir", dir, "--set", "data.limit_train=64", "--set", "data.limit_val=64"});
    QVERIFY2(r.rc == 2, r.err.constData());
    QVERIFY2(r.err.contains("--run-dir") && r.err.contains("must be valid UTF-8"), r.err.constData());
    QVERIFY(!std::filesystem::exists(dir));
  }

  void fp16OnCpuIsRefusedWithTheAlternative() {
    // Decided by the machine (its capabilities), never by the refusal under test.
    const auto caps = runCli({QStringLiteral("capabilities"), QStringLiteral("--json")});
    QVERIFY2(caps.rc == 0, caps.describe().constData());
    if (json::parse(caps.out.toStdString()).value("cuda", false))
      QSKIP("this machine has a CUDA device: fp16 is allowed here (the refusal is for machines without one)");
    QTemporaryDir root;
    auto r = runCli({QStringLiteral("run"), QStringLiteral("--runs-root"), root.path(), QStringLiteral("--set"),
                     QStringLiteral("speedups.precision=16-mixed")});
    QCOMPARE(r.rc, 2);
    QVERIFY2(r.err.contains("speedups.precision") && r.err.contains("bf16-mixed"), r.err.constData());
  }

  void missingDatasetIsADataErrorNamingThePath() {
    QTemporaryDir root;
    auto r = runCli({QStringLiteral("run"), QStringLiteral("--runs-root"), root.path(), QStringLiteral("--events-stdout"),
                     QStringLiteral("--set"), QStringLiteral("data.dataset=idx:/nonexistent/mnist")});
    QCOMPARE(r.rc, 3);
    auto events = eventsOf(r.out);
    auto end = ofType(events, "end");
    QCOMPARE(int(end.size()), 1);
    QCOMPARE(end[0]["status"].get<std::string>(), std::string("failed"));
    QVERIFY2(end[0]["summary"]["error"].get<std::string>().find("/nonexistent/mnist") != std::string::npos,
             end[0].dump().c_str());
  }

  // On the terminal the rank's error is said once (the launcher's "rank 0: ..." repeat is not).
  void aRanksErrorIsPrintedOnce() {
    QTemporaryDir root;
    auto r = runCli({QStringLiteral("run"), QStringLiteral("--runs-root"), root.path(), QStringLiteral("--set"),
                     QStringLiteral("data.dataset=idx:/nonexistent/mnist")});
    QCOMPARE(r.rc, 3);
    int errorLines = 0;
    for (const QByteArray& line : r.err.split('\n'))
      if (line.startsWith("error: ") && line.contains("/nonexistent/mnist")) ++errorLines;
    QVERIFY2(errorLines == 1, r.err.constData());
  }

  void sigtermCancelsAfterTheStepAndKeepsEverything() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH),
            {QStringLiteral("run"), QStringLiteral("--runs-root"), root.path(), QStringLiteral("--events-stdout"),
             QStringLiteral("--set"), QStringLiteral("train.log_every=5"), QStringLiteral("--set"),
             QStringLiteral("model.name=mnist-cnn"), QStringLiteral("--set"), QStringLiteral("train.epochs=3")});
    QByteArray out;
    // Wait for training to be under way (a step event), then ask it to stop.
    QTRY_VERIFY_WITH_TIMEOUT((out += p.readAllStandardOutput(), out.contains("\"type\":\"step\"")), 300000);
    ::kill(static_cast<pid_t>(p.processId()), SIGTERM);
    QVERIFY(p.waitForFinished(120000));
    out += p.readAllStandardOutput();
    QCOMPARE(p.exitCode(), 130);
    auto events = eventsOf(out);
    auto end = ofType(events, "end");
    QCOMPARE(int(end.size()), 1);
    QCOMPARE(end[0]["status"].get<std::string>(), std::string("cancelled"));
    wb::proto::RunDir run{events.front()["run_dir"].get<std::string>()};
    auto summary = wb::proto::readJsonFile(run.summary());
    QVERIFY(summary.ok());
    QCOMPARE((*summary)["status"].get<std::string>(), std::string("cancelled"));
    // The checkpoint of the cancelled position is there, so the run can be resumed.
    QVERIFY(QFile::exists(QString::fromStdString(run.lastCheckpoint().string())));
  }

  // A run folder belongs to one live run: a second run, or a resume, into it is refused while
  // the first trains, and the first run's event stream has nothing of theirs.
  void aRunFolderInUseIsRefused() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString runDir = root.filePath(QStringLiteral("busy"));
    QProcess first;
    first.start(QStringLiteral(WB_CLI_PATH),
                {QStringLiteral("run"), QStringLiteral("--run-dir"), runDir, QStringLiteral("--events-stdout"),
                 QStringLiteral("--set"), QStringLiteral("data.limit_train=20000"), QStringLiteral("--set"),
                 QStringLiteral("train.epochs=3"), QStringLiteral("--set"), QStringLiteral("train.log_every=1")});
    QByteArray out;
    QTRY_VERIFY_WITH_TIMEOUT((out += first.readAllStandardOutput(), out.contains("\"type\":\"step\"")), 300000);
    for (const QStringList& args : {tinyRun(runDir), QStringList{QStringLiteral("run"), QStringLiteral("--resume"), runDir}}) {
      const CliResult second = runCli(args);
      QVERIFY2(second.rc == 2, second.err.constData());
      QVERIFY2(second.err.contains(runDir.toUtf8()) && second.err.contains("another run is using it"), second.err.constData());
    }
    ::kill(static_cast<pid_t>(first.processId()), SIGTERM);
    QVERIFY(first.waitForFinished(120000));
    QCOMPARE(first.exitCode(), 130);
    const auto events = wb::proto::readEventsFile(wb::proto::RunDir{runDir.toStdString()}.events().string());
    QCOMPARE(int(ofType(events, "run").size()), 1);
    QCOMPARE(int(ofType(events, "end").size()), 1);
  }

  // A new run into a folder that holds a finished run is refused (its files untouched) unless
  // --overwrite, which replaces it: one run's events, not two.
  void aFinishedRunIsReplacedOnlyWithOverwrite() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString runDir = root.filePath(QStringLiteral("done"));
    const wb::proto::RunDir run{runDir.toStdString()};
    QCOMPARE(runCli(tinyRun(runDir)).rc, 0);
    const QByteArray summary = fileBytes(run.summary()), events = fileBytes(run.events());
    const CliResult again = runCli(tinyRun(runDir));
    QVERIFY2(again.rc == 2, again.err.constData());
    QVERIFY2(again.err.contains(runDir.toUtf8()) && again.err.contains("--overwrite"), again.err.constData());
    QCOMPARE(fileBytes(run.summary()), summary);
    QCOMPARE(fileBytes(run.events()), events);
    const CliResult replaced = runCli(tinyRun(runDir) << QStringLiteral("--overwrite"));
    QVERIFY2(replaced.rc == 0, replaced.err.constData());
    const auto after = wb::proto::readEventsFile(run.events().string());
    QCOMPARE(int(ofType(after, "run").size()), 1);
    QCOMPARE(int(ofType(after, "end").size()), 1);
  }

  // A checkpoint that cannot be written (here last.pt is a directory in the way) ends the run
  // `failed`, naming the file: not `ok` with weights that are not on disk.
  void aCheckpointNotWrittenFailsTheRunNamingIt() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString runDir = root.filePath(QStringLiteral("no-checkpoint"));
    const wb::proto::RunDir run{runDir.toStdString()};
    QVERIFY(QDir().mkpath(QString::fromStdString((run.lastCheckpoint() / "in-the-way").string())));
    const CliResult r = runCli(tinyRun(runDir) << QStringLiteral("--events-stdout"));
    QCOMPARE(r.rc, 1);
    const json end = eventsOf(r.out).back();
    QCOMPARE(end["status"].get<std::string>(), std::string("failed"));
    auto summary = wb::proto::readJsonFile(run.summary());
    QVERIFY(summary.ok());
    QCOMPARE((*summary)["status"].get<std::string>(), std::string("failed"));
    const std::string error = (*summary).value("error", "");
    QVERIFY2(error.find("last.pt") != std::string::npos && error.find("not written") != std::string::npos, error.c_str());
  }

  // More CPU devices than cores is refused before anything starts (exit 2), naming the field,
  // the cores, `capabilities` and the override; with --allow-oversubscribe the run trains, says
  // so in a warning, and its summary is marked so that no speedup is taken from it.
  void devicesBeyondTheCoresAreRefusedOrMarked() {
    WB_NEED(wb::test::missingFashionMnist());
    const CliResult caps = runCli({QStringLiteral("capabilities"), QStringLiteral("--json")});
    QCOMPARE(caps.rc, 0);
    const json capsJson = json::parse(caps.out.toStdString());
    if (capsJson.value("cuda", false)) QSKIP("this machine has CUDA: devices are GPUs there");
    const int cores = capsJson["cores"].get<int>();
    QCOMPARE(capsJson["speedups"]["devices"]["max"].get<int>(), cores);
    QTemporaryDir root;
    const QString runDir = root.filePath(QStringLiteral("oversubscribed"));
    QStringList args = {QStringLiteral("run"), QStringLiteral("--run-dir"), runDir, QStringLiteral("--events-stdout"),
                        QStringLiteral("--set"), QStringLiteral("speedups.devices=%1").arg(cores + 1),
                        QStringLiteral("--set"), QStringLiteral("data.limit_train=%1").arg(64 * (cores + 1)),
                        QStringLiteral("--set"), QStringLiteral("data.limit_val=64"),
                        QStringLiteral("--set"), QStringLiteral("train.max_steps=1")};
    const CliResult refused = runCli(args);
    QVERIFY2(refused.rc == 2, refused.describe().constData());
    for (const char* said : {"speedups.devices", "CPU core", "capabilities", "--allow-oversubscribe"})
      QVERIFY2(refused.err.contains(said), refused.err.constData());
    QVERIFY2(refused.err.contains(QByteArray::number(cores)), refused.err.constData());
    QVERIFY(!std::filesystem::exists(wb::proto::RunDir{runDir.toStdString()}.events()));

    const CliResult allowed = runCli(args << QStringLiteral("--allow-oversubscribe"));
    QVERIFY2(allowed.rc == 0, allowed.describe().constData());
    bool warned = false;
    for (const auto& w : ofType(eventsOf(allowed.out), "warning"))
      warned = warned || w.value("message", "").find("oversubscribed") != std::string::npos;
    QVERIFY(warned);
    auto summary = wb::proto::readJsonFile(wb::proto::RunDir{runDir.toStdString()}.summary());
    QVERIFY(summary.ok());
    const json& cpu = (*summary)["cpu"];
    QVERIFY2(cpu.value("oversubscribed", false), summary->dump().c_str());
    QVERIFY2(cpu.value("contended", false), summary->dump().c_str());  // what compare, ladder and advisor read
    QVERIFY2(cpu.value("note", "").find("oversubscribed") != std::string::npos, summary->dump().c_str());
  }
};

QTEST_GUILESS_MAIN(TestCliRun)  // QProcess needs an event loop for QTRY_*
#include "test_cli_run.moc"
