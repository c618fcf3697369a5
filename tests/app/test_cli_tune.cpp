// `workbench-cli tune` and `tune batch`: real searches on tiny data (an MLP on a slice of
// Fashion-MNIST). The search hands over a config that runs; a second tune on its folder continues
// it without running a finished trial again; Ctrl-C or SIGTERM in the batch or the trial phase
// keeps every finished size and trial, and the same command continues; bad input and a folder
// that holds no search are named. No test asserts a time or which configuration wins.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <csignal>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "../support/machine.h"
#include "../support/event_stream.h"
#include "../support/answer_output.h"
#include "../support/proc.h"

using nlohmann::json;
using wb::test::haveFashionMnist;

namespace {

QStringList tiny() {
  QStringList args;
  for (const char* kv : {"model.name=mlp", "data.limit_train=4096", "data.limit_val=512", "train.epochs=1", "train.threads=1"})
    args << QStringLiteral("--set") << QString::fromLatin1(kv);
  return args;
}

QStringList tuneArgs(const QString& out, QStringList extra = {}) {
  QStringList a{QStringLiteral("tune"), QStringLiteral("--out"), out, QStringLiteral("--only"), QStringLiteral("workers,eval"),
                QStringLiteral("--max-pairs"), QStringLiteral("2"), QStringLiteral("--budget"), QStringLiteral("10m")};
  return a + extra + tiny();
}

json readJson(const QString& file) {
  QFile f(file);
  if (!f.open(QIODevice::ReadOnly)) return json();
  return json::parse(f.readAll().toStdString(), nullptr, false);
}

int entries(const QString& dir) { return QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size(); }

// A search with a batch phase: workers × the base's batch and the finder's pick (64, 96, 128).
QStringList batchTuneArgs(const QString& out) {
  QStringList a{QStringLiteral("tune"), QStringLiteral("--out"), out, QStringLiteral("--only"), QStringLiteral("workers,batch"),
                QStringLiteral("--max-batch"), QStringLiteral("128"), QStringLiteral("--finalists"), QStringLiteral("1"),
                QStringLiteral("--max-pairs"), QStringLiteral("1"), QStringLiteral("--budget"), QStringLiteral("10m")};
  return a + tiny();
}

// The batch sizes batch.json says finished, with their run folders.
std::map<int, std::string> finishedSizes(const json& doc) {
  std::map<int, std::string> out;
  if (doc.is_object())
    for (const auto& p : doc.value("points", json::array()))
      if (p.value("status", "") == "ok") out[p.value("batch", 0)] = p.value("run_dir", "");
  return out;
}

// Polls until `done` holds or the process ended (the files are the progress, not a clock).
bool pollWhileRunning(QProcess& p, const std::function<bool()>& done, int timeoutMs) {
  QElapsedTimer waited;
  waited.start();
  while (!done() && p.state() == QProcess::Running && waited.elapsed() < timeoutMs) QTest::qWait(100);
  return done();
}

wb::test::ProcResult cli(const QStringList& args, int timeoutMs = 600000) {
  return wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, timeoutMs);
}

}  // namespace

class TestCliTune : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void init() {
    WB_NEED(wb::test::missingFashionMnist());
  }

  // The whole search: trials, rounds, finals, and a best.json that `run` takes; then a second
  // tune on the folder reuses every trial.
  void aSearchHandsOverAConfigThatRunsAndContinues() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("tune"));
    const auto first = cli(tuneArgs(out));
    QVERIFY2(first.rc == 0, first.describe().constData());
    const json doc = readJson(out + QStringLiteral("/tune.json"));
    QCOMPARE(doc["status"].get<std::string>(), std::string("ok"));
    QVERIFY(!doc["best"].get<std::string>().empty());
    QCOMPARE(int(doc["trials"].size()), 4 + 2);  // evaluation: inference eval × eval batch; training: workers {0, 2}
    QVERIFY(!doc["finals"].empty());
    QVERIFY(doc["target_acc"].is_number());
    for (const char* f : {"tune.md", "tune.html", "best.json", "best-torchrun.sh", "best-sbatch.sh", "best-lightning.py"})
      QVERIFY2(QFile::exists(out + QStringLiteral("/") + QString::fromLatin1(f)), f);
    // The answer first, the one tune.json holds, and the short table within 100 columns.
    QCOMPARE(QString::fromStdString(wb::test::firstParagraph(first.out)), QString::fromStdString(doc["answer"].get<std::string>()));
    QString wide;
    QVERIFY2(wb::test::widestLine(first.out, &wide) <= 100, qPrintable(wide));
    QVERIFY2(first.out.contains("Run the best with `workbench-cli run --config"), first.out.constData());
    const auto run = cli({QStringLiteral("run"), QStringLiteral("--config"), out + QStringLiteral("/best.json"), QStringLiteral("--runs-root"),
                          root.filePath(QStringLiteral("runs"))});
    QVERIFY2(run.rc == 0, run.describe().constData());

    const int trialDirs = entries(out + QStringLiteral("/trials"));
    const auto again = cli(tuneArgs(out));
    QVERIFY2(again.rc == 0, again.describe().constData());
    QVERIFY2(again.err.contains("6 finished trial(s) kept"), again.describe().constData());
    QCOMPARE(entries(out + QStringLiteral("/trials")), trialDirs);
  }

  // By default the finals go by parts: each finalist a try by parts against the config as given
  // in finals/<id> (loader workers keep the math: the math check and the segments, no run to the
  // target), no pairs; the table says so.
  void theFinalsGoByPartsByDefault() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("tune"));
    const QStringList args = QStringList{QStringLiteral("tune"), QStringLiteral("--out"), out, QStringLiteral("--only"), QStringLiteral("workers"),
                                         QStringLiteral("--finalists"), QStringLiteral("2"), QStringLiteral("--budget"), QStringLiteral("10m"),
                                         QStringLiteral("--references"), root.filePath(QStringLiteral("refs")), QStringLiteral("--details")} +
                             tiny();
    const auto r = cli(args);
    QVERIFY2(r.rc == 0, r.describe().constData());
    const json doc = readJson(out + QStringLiteral("/tune.json"));
    QCOMPARE(doc["status"].get<std::string>(), std::string("ok"));
    QVERIFY(!QFile::exists(out + QStringLiteral("/finals/pairs.json")));
    QVERIFY2(!doc["finals"].empty(), doc.dump().c_str());  // workers 0 (the config as given) and 2 both go on: 2 is measured
    const json& f = doc["finals"][0];
    QCOMPARE(f["method"].get<std::string>(), std::string("composed"));
    const json tried = readJson(out + QStringLiteral("/") + QString::fromStdString(f["dir"].get<std::string>()) + QStringLiteral("/try.json"));
    QCOMPARE(tried["method"].get<std::string>(), std::string("composed"));
    QVERIFY(tried["variant_runs"].empty());
    QVERIFY2(!f["verdict"].get<std::string>().empty(), f.dump().c_str());
    QVERIFY2(r.out.contains("by parts"), r.describe().constData());
  }

  // Ctrl-C after two trials: exit 130, the trials that finished are in tune.json, and the same
  // command continues from them.
  void cancelKeepsEveryFinishedTrial() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("tune"));
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH), tuneArgs(out, {QStringLiteral("--events-stdout")}));
    QVERIFY(p.waitForStarted());
    std::vector<json> events;
    int ended = 0;
    const bool two = wb::test::readEvents(p, events, [&](const json& ev) { return ev.value("type", "") == "trial_end" && ++ended == 2; }, 300000);
    QVERIFY2(two, p.readAllStandardError().constData());
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(120000));
    QCOMPARE(p.exitCode(), 130);
    const json doc = readJson(out + QStringLiteral("/tune.json"));
    QCOMPARE(doc["status"].get<std::string>(), std::string("cancelled"));
    int finished = 0;
    for (const auto& t : doc["trials"]) finished += t["status"] == "ok";
    QVERIFY(finished >= 2);
    QVERIFY(!QFile::exists(out + QStringLiteral("/best.json")));
    const auto again = cli(tuneArgs(out));
    QVERIFY2(again.rc == 0, again.describe().constData());
    QVERIFY2(again.err.contains(QStringLiteral("%1 finished trial(s) kept").arg(finished).toUtf8()), again.describe().constData());
    // Each finished trial is reused from its folder, not run again.
    const json after = readJson(out + QStringLiteral("/tune.json"));
    for (const auto& t : doc["trials"]) {
      if (t["status"] != "ok") continue;
      bool same = false;
      for (const auto& u : after["trials"]) same = same || (u["candidate"] == t["candidate"] && u["stage"] == t["stage"] && u["rung"] == t["rung"] && u["run_dir"] == t["run_dir"]);
      QVERIFY2(same, t.dump().c_str());
    }
  }

  // SIGTERM once the batch finder finished a size: exit 130 with batch/batch.json kept, and the same
  // command continues the search without measuring a finished size again.
  void aCutInTheBatchPhaseContinues() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("tune"));
    const QString batchJson = out + QStringLiteral("/batch/batch.json");
    QProcess p;
    p.start(QStringLiteral(WB_CLI_PATH), batchTuneArgs(out));
    QVERIFY(p.waitForStarted());
    QVERIFY2(pollWhileRunning(p, [&] { return !finishedSizes(readJson(batchJson)).empty(); }, 300000), p.readAllStandardError().constData());
    p.terminate();
    QVERIFY(p.waitForFinished(120000));
    const QByteArray cutErr = p.readAllStandardError();
    QVERIFY2(p.exitCode() == 130, cutErr.constData());
    const std::map<int, std::string> kept = finishedSizes(readJson(batchJson));
    QVERIFY(!kept.empty());
    const QStringList runsBefore = QDir(out + QStringLiteral("/batch/runs")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);

    const auto again = cli(batchTuneArgs(out));
    QVERIFY2(again.rc == 0, again.describe().constData());
    QVERIFY2(again.err.contains("finished size(s) kept"), again.describe().constData());
    const std::map<int, std::string> after = finishedSizes(readJson(batchJson));
    for (const auto& [batch, dir] : kept) {
      QVERIFY2(after.count(batch) && after.at(batch) == dir, qPrintable(QStringLiteral("batch %1 was measured again").arg(batch)));
      QVERIFY2(!QDir(out + QStringLiteral("/batch/runs/b%1-r2").arg(batch)).exists(), qPrintable(QStringLiteral("b%1 ran twice").arg(batch)));
    }
    for (const QString& run : runsBefore) QVERIFY2(QDir(out + QStringLiteral("/batch/runs/") + run).exists(), qPrintable(run));
    const json doc = readJson(out + QStringLiteral("/tune.json"));
    QCOMPARE(doc["status"].get<std::string>(), std::string("ok"));
    QVERIFY2(finishedSizes(doc["batch"]) == after, "tune.json carries the batch phase's record");
  }

  // A folder that is not a search is never written into: a usage error naming what it holds.
  void aFolderThatHoldsNoSearchIsRefused() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("mine"));
    QVERIFY(QDir().mkpath(out + QStringLiteral("/photos")));
    QFile notes(out + QStringLiteral("/notes.txt"));
    QVERIFY(notes.open(QIODevice::WriteOnly));
    notes.write("mine\n");
    notes.close();
    const auto tune = cli(tuneArgs(out));
    QCOMPARE(tune.rc, 2);
    QVERIFY2(tune.err.contains("notes.txt") && tune.err.contains("photos/") && tune.err.contains("tune.json"), tune.describe().constData());
    const auto batch = cli(QStringList{QStringLiteral("tune"), QStringLiteral("batch"), QStringLiteral("--out"), out} + tiny());
    QCOMPARE(batch.rc, 2);
    QVERIFY2(batch.err.contains("notes.txt") && batch.err.contains("batch.json"), batch.describe().constData());
    QCOMPARE(QDir(out).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).size(), 2);  // nothing written
  }

  void badInputIsNamed() {
    QTemporaryDir root;
    const auto junk = cli(tuneArgs(root.filePath(QStringLiteral("a")), {QStringLiteral("--budget"), QStringLiteral("ten")}));
    QCOMPARE(junk.rc, 2);
    QVERIFY2(junk.err.contains("--budget"), junk.describe().constData());
    const auto unknown = cli(tuneArgs(root.filePath(QStringLiteral("b")), {QStringLiteral("--only"), QStringLiteral("warp")}));
    QCOMPARE(unknown.rc, 2);
    QVERIFY2(unknown.err.contains("--only"), unknown.describe().constData());
    // Pin memory needs CUDA: on this machine nothing is left to search.
    const auto empty = cli(tuneArgs(root.filePath(QStringLiteral("c")), {QStringLiteral("--only"), QStringLiteral("pin_memory")}));
    if (empty.rc == 0) QSKIP("this machine has CUDA: pin memory is searchable");
    QCOMPARE(empty.rc, 2);
    QVERIFY2(empty.err.contains("search space is empty"), empty.describe().constData());
    // A budget smaller than the first round and one pair: said after the first trial, with what would do.
    // 0.01 s is less than any one trial on any machine (2 s fitted this tiny search on a quiet host).
    const auto small = cli(tuneArgs(root.filePath(QStringLiteral("d")), {QStringLiteral("--budget"), QStringLiteral("0.01s")}));
    QCOMPARE(small.rc, 2);
    QVERIFY2(small.err.contains("--budget") && small.err.contains("too small") && small.err.contains("give at least"), small.describe().constData());
    // A target the config as given never reaches: said, with one it does.
    const auto target = cli(tuneArgs(root.filePath(QStringLiteral("e")), {QStringLiteral("--target-acc"), QStringLiteral("99.9"),
                                                                            QStringLiteral("--finalists"), QStringLiteral("1"), QStringLiteral("--max-pairs"), QStringLiteral("1")}));
    QCOMPARE(target.rc, 2);
    QVERIFY2(target.err.contains("never reached") && target.err.contains("e.g. --target-acc"), target.describe().constData());
  }

  // The batch finder steps up through sizes that are not only powers of two, returns a size it
  // ran, and writes a config that scales the lr for it.
  void theBatchFinderReturnsASizeItRan() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("batch"));
    const auto r = cli(QStringList{QStringLiteral("tune"), QStringLiteral("batch"), QStringLiteral("--out"), out, QStringLiteral("--max-batch"),
                                   QStringLiteral("300"), QStringLiteral("--no-accuracy-check")} + tiny());
    QVERIFY2(r.rc == 0, r.describe().constData());
    const json doc = readJson(out + QStringLiteral("/batch.json"));
    QVERIFY(doc["points"].size() >= 2);
    QCOMPARE(doc["points"][0]["batch"].get<int>(), 64);
    QCOMPARE(doc["points"][1]["batch"].get<int>(), 96);
    bool ran = false;
    for (const auto& p : doc["points"]) ran = ran || p["batch"] == doc["chosen"];
    QVERIFY(ran);
    QVERIFY(!doc["stopped"].get<std::string>().empty());
    // The memory it keeps a margin of: this host's free memory when it started (MemAvailable).
    QCOMPARE(doc["memory_kind"].get<std::string>(), std::string("host RSS"));
    QVERIFY(doc["memory_free"].is_number_integer() && doc["memory_free"].get<int64_t>() > 0);
    const json best = readJson(out + QStringLiteral("/best.json"));
    QCOMPARE(best["train"]["batch_size"], doc["chosen"]);
    if (doc["chosen"].get<int>() != 64) QCOMPARE(best["optim"]["lr_base_batch"].get<int>(), 64);
  }
};

QTEST_GUILESS_MAIN(TestCliTune)
#include "test_cli_tune.moc"
