// The greedy ladder by parts, on real short runs of tiny data: a step whose change switches in one
// process (loader workers, precision) is a try by parts in its step folder and decided by its
// composed verdict, its row saying so; the reference runs the precision step made are kept for the
// experiment, so the same ladder again reuses them; pairs still measure every step when asked
// (--repeats). No test asserts a time.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <vector>

#include <nlohmann/json.hpp>

#include "../support/machine.h"
#include "../support/proc.h"

using nlohmann::json;

namespace {

QStringList ladderArgs(const QString& refs, const QString& out, const QStringList& extra = {}) {
  QStringList args{QStringLiteral("ladder"), QStringLiteral("--out"), out, QStringLiteral("--references"), refs,
                   QStringLiteral("--reference-runs"), QStringLiteral("3"), QStringLiteral("--steps"),
                   QStringLiteral("workers,precision,early_stopping,inference_eval")};
  for (const char* kv : {"model.name=lenet", "data.limit_train=2000", "data.limit_val=500", "train.epochs=1",
                         "train.threads=1", "train.batch_size=32", "optim.lr=0.05", "optim.momentum=0.9"})
    args << QStringLiteral("--set") << QString::fromLatin1(kv);
  return args + extra;
}

json readJson(const QString& file) {
  QFile f(file);
  if (!f.open(QIODevice::ReadOnly)) return json();
  return json::parse(f.readAll().toStdString(), nullptr, false);
}

json stepOf(const json& ladder, const std::string& key) {
  for (const auto& s : ladder["ladder"]["steps"])
    if (s.value("key", std::string()) == key) return s;
  return json();
}

}  // namespace

class TestCliLadderParts : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void init() { WB_NEED(wb::test::missingFashionMnist()); }

  void stepsThatSwitchInOneProcessAreMeasuredByParts() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("ladder")), refs = root.filePath(QStringLiteral("refs"));
    auto proc = wb::test::runProcess(QStringLiteral(WB_CLI_PATH), ladderArgs(refs, out), 900000);
    QVERIFY2(proc.rc == 0, proc.describe().constData());
    const json ladder = readJson(out + QStringLiteral("/ladder.json"));
    // bf16 on a CPU without AVX-512 BF16 or AMX is emulated: the ladder skips it and says so, and
    // early stopping is then the first step that needs the reference runs.
    const json precisionRow = stepOf(ladder, "precision");
    const bool bf16 = !precisionRow["skipped"].get<bool>();
    if (!bf16) QVERIFY2(precisionRow["note"].get<std::string>().find("emulated") != std::string::npos, precisionRow.dump().c_str());
    std::vector<const char*> measured{"workers", "early_stopping", "inference_eval"};
    if (bf16) measured.push_back("precision");
    for (const char* key : measured) {
      const json step = stepOf(ladder, key);
      QVERIFY2(step.is_object(), ladder.dump().substr(0, 2000).c_str());
      QCOMPARE(step["settled"].get<std::string>(), std::string("by parts"));
      const std::string decision = step["decision"].get<std::string>();
      QVERIFY2(decision.rfind("kept: ", 0) == 0 || decision.rfind("dropped: ", 0) == 0 || decision.rfind("not measured: contended", 0) == 0,
               decision.c_str());
      QVERIFY2(step["note"].get<std::string>().find("by parts: ") != std::string::npos, step["note"].dump().c_str());
    }
    const json workers = readJson(out + QStringLiteral("/steps/01-workers/try.json"));
    QCOMPARE(workers["method"].get<std::string>(), std::string("composed"));
    QVERIFY(workers["variant_runs"].empty());  // keeps the math: no run to the target
    const QString maker = bf16 ? QStringLiteral("/steps/04-precision/try.json") : QStringLiteral("/steps/05-early-stopping/try.json");
    const json made = readJson(out + maker);
    QCOMPARE(made["references"]["ran"].get<int>(), 3);
    if (bf16) {
      QVERIFY2(!made["math"]["keeps_math"].get<bool>(), made["math"].dump().c_str());
      QVERIFY(!QFile::exists(out + QStringLiteral("/steps/04-precision/pairs.json")));
      // The ladder asks only "faster?": the variant's runs may stop once it cannot be shown so,
      // before the last, and the step is then dropped and says why.
      const json& looks = made["variant_looks"];
      QVERIFY2(looks.is_object() && looks["runs"].get<int>() >= 1 && looks["runs"].get<int>() <= looks["max_runs"].get<int>(),
               made.dump().substr(0, 2000).c_str());
      if (looks["stopped"] == "cannot be faster") {
        QVERIFY(looks["runs"].get<int>() < looks["max_runs"].get<int>());
        const std::string decision = precisionRow["decision"].get<std::string>();
        QVERIFY2(decision.rfind("dropped: ", 0) == 0 && decision.find("could no longer be shown faster") != std::string::npos,
                 decision.c_str());
      }
    }
    // Early stopping is replayed on the reference runs (no run of its own); the evaluation is
    // timed by evaluations interleaved in one process.
    const json stopping = readJson(out + QStringLiteral("/steps/05-early-stopping/try.json"));
    QVERIFY2(stopping["early_stopping"]["runs"].size() == 3, stopping.dump().substr(0, 2000).c_str());
    QVERIFY(stopping["variant_runs"].empty());
    const json evaluation = readJson(out + QStringLiteral("/steps/07-inference-eval/try.json"));
    QCOMPARE(evaluation["evaluation"]["kind"].get<std::string>(), std::string("evaluation segments"));

    // The same ladder in a new folder: the experiment's reference runs are reused, none rerun.
    const QString again = root.filePath(QStringLiteral("again"));
    proc = wb::test::runProcess(QStringLiteral(WB_CLI_PATH), ladderArgs(refs, again), 900000);
    QVERIFY2(proc.rc == 0, proc.describe().constData());
    const json reused = readJson(again + maker);
    QCOMPARE(reused["references"]["reused"].get<int>(), 3);
    QCOMPARE(reused["references"]["ran"].get<int>(), 0);
  }

  void pairsMeasureEveryStepWhenAsked() {
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("ladder"));
    QStringList args = ladderArgs(root.filePath(QStringLiteral("refs")), out, {QStringLiteral("--repeats"), QStringLiteral("1")});
    args << QStringLiteral("--steps") << QStringLiteral("workers") << QStringLiteral("--set") << QStringLiteral("data.limit_train=256");
    auto proc = wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, 600000);
    QVERIFY2(proc.rc == 0, proc.describe().constData());
    QVERIFY(QFile::exists(out + QStringLiteral("/steps/01-workers/pairs.json")));
    QVERIFY(!QFile::exists(out + QStringLiteral("/steps/01-workers/try.json")));
    QVERIFY(stepOf(readJson(out + QStringLiteral("/ladder.json")), "workers")["settled"].get<std::string>() != "by parts");
  }
};

QTEST_GUILESS_MAIN(TestCliLadderParts)
#include "test_cli_ladder_parts.moc"
