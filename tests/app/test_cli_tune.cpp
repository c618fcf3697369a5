// `workbench-cli tune` and `tune batch`: real searches on tiny data (an MLP on a slice of
// Fashion-MNIST). The search hands over a config that runs; a second tune on its folder continues
// it without running a finished trial again; Ctrl-C keeps every finished trial; bad input is
// named. No test asserts a time or which configuration wins.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <csignal>

#include <nlohmann/json.hpp>

#include "../support/datasets.h"
#include "../support/event_stream.h"
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

wb::test::ProcResult cli(const QStringList& args, int timeoutMs = 600000) {
  return wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, timeoutMs);
}

}  // namespace

class TestCliTune : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void init() {
    if (!haveFashionMnist()) QSKIP("Fashion-MNIST is not installed (/usr/share/datasets/fashion-mnist)");
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
    QVERIFY(first.out.contains("best:"));
    const auto run = cli({QStringLiteral("run"), QStringLiteral("--config"), out + QStringLiteral("/best.json"), QStringLiteral("--runs-root"),
                          root.filePath(QStringLiteral("runs"))});
    QVERIFY2(run.rc == 0, run.describe().constData());

    const int trialDirs = entries(out + QStringLiteral("/trials"));
    const auto again = cli(tuneArgs(out));
    QVERIFY2(again.rc == 0, again.describe().constData());
    QVERIFY2(again.err.contains("6 finished trial(s) kept"), again.describe().constData());
    QCOMPARE(entries(out + QStringLiteral("/trials")), trialDirs);
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
    const auto small = cli(tuneArgs(root.filePath(QStringLiteral("d")), {QStringLiteral("--budget"), QStringLiteral("2s")}));
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
