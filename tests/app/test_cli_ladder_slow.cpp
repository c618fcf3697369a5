// `workbench-cli ladder` on a small Fashion-MNIST budget (lenet, 2000 train / 500 val samples,
// 1 epoch), adaptive pairs (the default): writes the ladder table in every format with every step
// this machine can run, each with its pairs and verdict, and the reason for each one it cannot
// (decided from `workbench-cli capabilities --json`).
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>
#include "wb/common/speedups.h"
#include "../support/machine.h"

using nlohmann::json;

namespace {

using wb::test::haveFashionMnist;

std::string slurp(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Which steps this machine must skip, from the same capabilities the ladder reads.
std::map<std::string, bool> expectedSkips(const json& caps) {
  const bool cuda = caps.value("cuda", false);
  const json& sp = caps["speedups"];
  const int maxDevices = sp["devices"].value("max", 1);
  const int devices = cuda ? std::min(caps.value("gpus", 0), maxDevices) : std::min(2, maxDevices);
  const std::string precision = cuda ? "16-mixed" : "bf16-mixed";
  std::map<std::string, bool> skip;
  skip["baseline"] = false;
  skip["workers"] = !sp["workers"].value("available", true);
  skip["pin_memory"] = !sp["pin_memory"].value("available", false);
  skip["devices"] = devices < 2 || !sp["devices"].value("available", true);
  // Emulated bf16 (a CPU without AVX-512 BF16 / AMX) is skipped too: it only slows the run down.
  const json& prec = sp["precision"]["values"][precision];
  skip["precision"] = !prec.value("available", false) || !prec.value("native", true);
  skip["early_stopping"] = !sp["early_stopping"].value("available", true);
  skip["sharding"] = skip["devices"] || !sp["sharding"].value("available", true);
  skip["inference_eval"] = !sp["inference_eval"].value("available", true);
  // The levers: the cache only decodes image folders (this is Fashion-MNIST); lenet has
  // convolutions; adam has a multi-tensor step; accumulation is left out (--steps: its 4 x fewer
  // optimiser steps would leave lenet near chance in this one-epoch budget); cuDNN and TF32 need CUDA.
  skip["decoded_cache"] = true;
  skip["channels_last"] = !sp["channels_last"].value("available", true);
  skip["fused_optimizer"] = !sp["fused_optimizer"].value("available", true);
  skip["grad_accumulation"] = true;
  skip["cudnn_benchmark"] = !cuda;
  skip["tf32"] = !cuda;
  return skip;
}

}  // namespace

class TestCliLadderSlow : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void ladderWritesEveryStepOrItsReason() {
    WB_NEED(wb::test::missingFashionMnist());
    const QString cli = QStringLiteral(WB_CLI_PATH);
    QProcess capsProc;
    capsProc.start(cli, {QStringLiteral("capabilities"), QStringLiteral("--json")});
    QVERIFY(capsProc.waitForFinished(60000));
    QCOMPARE(capsProc.exitCode(), 0);
    const json caps = json::parse(capsProc.readAllStandardOutput().toStdString());
    const auto skip = expectedSkips(caps);

    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("ladder"));
    // Adaptive, capped at 2 pairs a step (and one rerun of a contended pair) to keep CI short.
    // Cumulative: every step builds on the one before (the greedy default is test_cli_ladder_greedy).
    QStringList args{QStringLiteral("ladder"), QStringLiteral("--cumulative"), QStringLiteral("--out"), out,
                     QStringLiteral("--steps"),
                     QStringLiteral("workers,pin_memory,devices,precision,early_stopping,sharding,inference_eval,"
                                    "decoded_cache,channels_last,fused_optimizer,cudnn_benchmark,tf32"),
                     QStringLiteral("--max-pairs"), QStringLiteral("2"),
                     QStringLiteral("--rerun-contended"), QStringLiteral("1")};
    // Adam learns visibly in 32 steps (SGD at the default lr stays near chance), so the accuracy
    // beside each speedup means something.
    for (const char* kv : {"model.name=lenet", "data.limit_train=2000", "data.limit_val=500", "train.epochs=1",
                           "train.log_every=5", "optim.name=adam", "optim.lr=0.002"})
      args << QStringLiteral("--set") << QString::fromLatin1(kv);
    QProcess ladder;
    ladder.setProcessChannelMode(QProcess::SeparateChannels);
    ladder.start(cli, args);
    QVERIFY(ladder.waitForStarted());
    QVERIFY2(ladder.waitForFinished(840000), "the ladder did not finish in 14 minutes");
    const QByteArray err = ladder.readAllStandardError();
    QVERIFY2(ladder.exitCode() == 0, err.constData());

    for (const char* f : {"ladder.md", "ladder.csv", "ladder.tex", "ladder.json", "ladder.html", "ladder.svg", "ladder.png"})
      QVERIFY2(QFileInfo(QDir(out).filePath(QString::fromLatin1(f))).size() > 0, f);
    QVERIFY(slurp(QDir(out).filePath(QStringLiteral("ladder.png"))).rfind("\x89PNG", 0) == 0);

    const json doc = json::parse(slurp(QDir(out).filePath(QStringLiteral("ladder.json"))));
    const json& steps = doc["ladder"]["steps"];
    QStringList keys;
    for (const auto& s : steps) keys << QString::fromStdString(s["key"].get<std::string>());
    QStringList all{QStringLiteral("baseline")};
    for (const wb::Speedup& sp : wb::speedupTable()) all << QString::fromUtf8(sp.key);
    QCOMPARE(keys, all);
    const std::string md = slurp(QDir(out).filePath(QStringLiteral("ladder.md")));
    const std::string stdoutText = ladder.readAllStandardOutput().toStdString();
    int baselineRuns = 0;
    for (const auto& s : steps) {
      const std::string key = s["key"];
      QVERIFY2(md.find(s["added"].get<std::string>()) != std::string::npos, key.c_str());
      QCOMPARE(s["skipped"].get<bool>(), skip.at(key));
      if (s["skipped"].get<bool>()) {
        const std::string note = s["note"];
        QVERIFY2(!note.empty(), key.c_str());
        QVERIFY2(md.find("skipped: " + note) != std::string::npos, key.c_str());  // the reason is in the table
        continue;
      }
      // A step that ran: pairs with the baseline, added until the verdict was clear or the cap
      // (2 pairs, and one more for a contended one), each run folder ended, with a time and an
      // accuracy beside it and the speedup's verdict (a multiplier even when every pair was
      // contended: the row then says so).
      const int pairs = s["repeats"].get<int>();
      if (key != "baseline") {
        QVERIFY2(pairs >= 1 && pairs <= 3, key.c_str());
        QVERIFY2(!s["settled"].get<std::string>().empty(), key.c_str());
        QVERIFY2(s["estimate"]["wall"]["verdict"].is_string(), key.c_str());
        baselineRuns += pairs;
      }
      QVERIFY2(s["wall_s"]["median"].is_number(), key.c_str());
      QVERIFY2(s["best_val_acc"].is_number(), key.c_str());
      // No multiplier only when the host speed check set every pair aside (a loaded host changed
      // speed across them): the estimate says so.
      const json& wall = s["estimate"]["wall"];
      const bool allSetAside = key != "baseline" && wall.value("set_aside", 0) > 0 && wall.value("set_aside", 0) == wall.value("pairs", -1);
      QVERIFY2(s["speedup"]["cumulative"].is_number() || (allSetAside && wall.value("method", std::string()).find("set aside") != std::string::npos),
               (key + ": " + wall.dump()).c_str());
      const std::string dir = s["run_dirs"][0];
      QVERIFY2(QFile::exists(QString::fromStdString(dir + "/summary.json")), dir.c_str());
      QVERIFY2(s["best_val_acc"].get<double>() > 0.3, key.c_str());  // lenet learns something in one epoch
    }
    QCOMPARE(steps[0]["speedup"]["cumulative"].get<double>(), 1.0);
    QCOMPARE(steps[0]["repeats"].get<int>(), baselineRuns);  // one baseline run in every pair
    // The last step carries every speedup that ran.
    const json& last = steps.back()["config"]["speedups"];
    QCOMPARE(last["workers"].get<int>(), std::min(std::max(1, caps.value("cores", 1)), 4));
    QCOMPARE(last["inference_eval"].get<bool>(), true);
    QCOMPARE(last["early_stopping"]["patience"].get<int>(), 2);
    QCOMPARE(last["channels_last"].get<bool>(), !skip.at("channels_last"));
    QCOMPARE(last["fused_optimizer"].get<bool>(), !skip.at("fused_optimizer"));
    QCOMPARE(steps[0]["config"]["speedups"]["workers"].get<int>(), 0);
    // The terminal leads with ladder.json's answer (its first line: the answer wraps at 100 columns).
    const std::string answer = doc["ladder"]["answer"].get<std::string>();
    const std::string firstWords = QString::fromStdString(answer).section(QLatin1Char(' '), 0, 3).toStdString();
    QVERIFY2(!answer.empty() && stdoutText.find(firstWords) != std::string::npos, stdoutText.c_str());
  }
};

QTEST_APPLESS_MAIN(TestCliLadderSlow)
#include "test_cli_ladder_slow.moc"
