// `workbench-cli ladder` is greedy by default: each step runs as pairs against the configuration
// kept before it (its step folder's pairs.json says which), is kept or dropped with the reason,
// and what was dropped is left out of every later step; the ladder ends with the configuration
// it kept, against the baseline, written as kept.json, which `run --config` takes. Real
// processes on a tiny Fashion-MNIST budget; the test holds the rule whatever the steps measure.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>

#include <nlohmann/json.hpp>

#include "../support/machine.h"
#include "../support/answer_output.h"
#include "../support/proc.h"

using nlohmann::json;

namespace {

json readJson(const QString& path) {
  std::ifstream in(path.toStdString());
  return json::parse(in, nullptr, false);
}

// A config's speedups (what a step changes), for comparing configs whatever their names.
json speedupsOf(const json& config) { return config.value("speedups", json::object()); }

}  // namespace

class TestCliLadderGreedy : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void eachStepIsMeasuredAgainstWhatWasKept() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("ladder"));
    QStringList args{QStringLiteral("ladder"), QStringLiteral("--out"), out, QStringLiteral("--repeats"), QStringLiteral("1"),
                     QStringLiteral("--steps"), QStringLiteral("workers,devices,early_stopping,sharding,inference_eval,grad_accumulation")};
    for (const char* kv : {"model.name=mlp", "data.limit_train=512", "data.limit_val=128", "train.epochs=1",
                           "train.log_every=4", "train.threads=1"})
      args << QStringLiteral("--set") << QString::fromLatin1(kv);
    const auto run = wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, 600000);
    QVERIFY2(run.rc == 0, run.describe().constData());
    const json doc = readJson(QDir(out).filePath(QStringLiteral("ladder.json")));
    // The answer first, the one ladder.json holds, and the short table within 100 columns; the
    // same ladder again on its folder (every pair done: nothing runs) with --details: the full table.
    const std::string answer = doc["ladder"]["answer"].get<std::string>();
    QVERIFY(!answer.empty());
    QCOMPARE(QString::fromStdString(wb::test::firstParagraph(run.out)), QString::fromStdString(answer));
    QString wide;
    QVERIFY2(wb::test::widestLine(run.out, &wide) <= 100, qPrintable(wide));
    QVERIFY2(run.out.contains("kept: ") || run.out.contains("dropped: ") || run.out.contains("not measured"), run.out.constData());
    for (const char* key : {"speedups.", "inference_eval", "early_stopping"}) QVERIFY2(answer.find(key) == std::string::npos, key);
    const auto details = wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args << QStringLiteral("--details"), 600000);
    QVERIFY2(details.rc == 0 && details.out.contains("Kept?"), details.describe().constData());  // the full table
    QCOMPARE(QString::fromStdString(wb::test::firstParagraph(details.out)), QString::fromStdString(answer));

    QVERIFY(doc["ladder"]["greedy"].get<bool>());
    json kept = json();  // the speedups kept so far: the baseline's first
    json keptRow;
    bool devicesRan = false;
    for (const auto& s : doc["ladder"]["steps"]) {
      const std::string key = s["key"];
      // One pair has no interval, so more devices are never kept here: sharding, which needs
      // them and only adds to data parallel's cost, is then not measured, and says why; so is
      // accumulation, which on one device only makes the batch larger.
      if (key == "devices") devicesRan = !s["skipped"].get<bool>();
      if ((key == "sharding" || key == "grad_accumulation") && devicesRan) {
        QVERIFY2(s["skipped"].get<bool>(), key.c_str());
        QVERIFY2(s["note"].get<std::string>().find("more devices were measured and not kept") != std::string::npos,
                 s["note"].dump().c_str());
      }
      if (key == "baseline") {
        kept = speedupsOf(s["config"]);
        continue;
      }
      if (key == "kept") {  // skipped when no step was kept (each slower, short of the target, or contended)
        keptRow = s;
        continue;
      }
      if (s["skipped"].get<bool>()) continue;
      // Its reference was the configuration kept before it; it changed only its own speedup.
      // Its folder: <out>/steps/<slug>/ holds runs/<slug>-p1 and pairs.json.
      QDir stepDir = QFileInfo(QString::fromStdString(s["run_dirs"][0].get<std::string>())).dir();
      QVERIFY(stepDir.cdUp());
      QCOMPARE(QFileInfo(stepDir.path()).dir().dirName(), QStringLiteral("steps"));
      const json pairs = readJson(stepDir.filePath(QStringLiteral("pairs.json")));
      QVERIFY2(pairs.is_object(), key.c_str());
      QCOMPARE(speedupsOf(pairs["plan"]["reference"]["config"]), kept);
      const std::string decision = s["decision"];
      QVERIFY2(decision.rfind("kept: ", 0) == 0 || decision.rfind("dropped: ", 0) == 0 || decision.rfind("not measured: contended", 0) == 0,
               decision.c_str());
      if (decision.rfind("kept", 0) == 0) kept = speedupsOf(s["config"]);
    }
    // The ladder's answer: the kept configuration, against the baseline (or why there is none),
    // and kept.json with exactly those speedups.
    QVERIFY(keptRow.is_object());
    const json keptFile = readJson(QDir(out).filePath(QStringLiteral("kept.json")));
    QCOMPARE(speedupsOf(keptFile), kept);
    if (!keptRow["skipped"].get<bool>()) {
      QCOMPARE(speedupsOf(keptRow["config"]), kept);
      QVERIFY(!keptRow["run_dirs"].empty());
    }
    // kept.json runs as it is.
    const auto again = wb::test::runProcess(
        QStringLiteral(WB_CLI_PATH),
        {QStringLiteral("run"), QStringLiteral("--config"), QDir(out).filePath(QStringLiteral("kept.json")), QStringLiteral("--runs-root"),
         root.filePath(QStringLiteral("kept-run"))},
        300000);
    QVERIFY2(again.rc == 0, again.describe().constData());
  }
};

QTEST_APPLESS_MAIN(TestCliLadderGreedy)
#include "test_cli_ladder_greedy.moc"
