// Experiments that drive the user's own script: `workbench-cli try --command` runs each arm as a
// plain PyTorch loop recorded with the Python recorder (train_fashion_mnist.py, Debian's
// python3-torch) and judges the pairs like the core's runs; a change the command cannot be told
// of is refused, a crashing arm is named with its command, and the runs that finished are kept;
// `ladder --command` leaves the steps out that the command cannot take.
#include <QtTest/QtTest>

#include "../../support/machine.h"

#include <nlohmann/json.hpp>

#include "python_util.h"
#include "wb/records/run_record.h"

using nlohmann::json;

namespace {
QString cli() { return QStringLiteral(WB_CLI_PATH); }
QString script() { return wb::test::pythonTestsDir() + QStringLiteral("/train_fashion_mnist.py"); }
// A small real run: two epochs of 1,000 images, evaluated on 300.
QString trainArgs() { return QStringLiteral(" --epochs 2 --limit-train 1000 --limit-val 300"); }

json readJson(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return json();
  return json::parse(f.readAll().toStdString(), nullptr, false);
}
}  // namespace

class TestCommandTry : public QObject {
  Q_OBJECT
  QTemporaryDir scratch_{wb::test::scratchPattern(QStringLiteral("command-try"))};

  wb::test::ProcResult cliRun(const QStringList& args, int timeoutMs = 300000) {
    return wb::test::runProcess(cli(), args, timeoutMs, wb::test::pythonEnv());
  }

 private Q_SLOTS:
  void initTestCase() {
    WB_NEED(wb::test::missingPythonTorch());
    WB_NEED(wb::test::missingFashionMnist());
    QVERIFY(scratch_.isValid());
  }

  // A change the script takes through a placeholder, with the same cores asked by both arms: its
  // pairs count on a busy machine too (runs slowed alike), so the verdict is always there.
  void aTryOfTheUsersScriptEndsWithAVerdict() {
    const QString out = scratch_.filePath(QStringLiteral("batch"));
    const QString command = wb::test::python3() + QStringLiteral(" ") + script() + QStringLiteral(" {run_dir} --batch-size {train.batch_size}") + trainArgs();
    const auto r = cliRun({QStringLiteral("try"), QStringLiteral("--command"), command, QStringLiteral("--vary"),
                           QStringLiteral("train.batch_size=256"), QStringLiteral("--repeats"), QStringLiteral("2"),
                           QStringLiteral("--rerun-contended"), QStringLiteral("3"), QStringLiteral("--out"), out, QStringLiteral("--json")});
    QVERIFY2(r.rc == 0, r.describe().constData());
    const json doc = json::parse(r.out.toStdString(), nullptr, false);
    QCOMPARE(doc.value("status", ""), std::string("ok"));
    QVERIFY(doc["runs"].size() >= 2);
    QCOMPARE(doc.value("run_command", ""), command.toStdString());
    // Each arm ran the script with its own setting, into the run folder it was given.
    for (const json& run : doc["runs"]) {
      auto base = wb::records::loadRun((out + QStringLiteral("/") + QString::fromStdString(run["reference_dir"])).toStdString());
      auto var = wb::records::loadRun((out + QStringLiteral("/") + QString::fromStdString(run["variant_dir"])).toStdString());
      QVERIFY(base.ok() && var.ok());
      QCOMPARE(base->status, std::string("ok"));
      QCOMPARE(base->configAt("train.batch_size"), json(64));
      QCOMPARE(var->configAt("train.batch_size"), json(256));
      QCOMPARE(var->configAt("name"), json("python-fashion-mlp"));
    }
    QVERIFY2(doc.value("pairs", 0) >= 1, doc.dump(2).c_str());
    const json wall = doc["estimate"]["wall"];
    QVERIFY2(wall.contains("verdict") && !wall["verdict"].get<std::string>().empty(), doc.dump(2).c_str());
    QVERIFY(wall.value("point", 0.0) > 0);
  }

  // Whole pipelines side by side: the baseline is the workbench's own run, the variant the same
  // config through the user's script; each arm runs what it was given, the table says what was
  // compared, and the folder is refused to another variant command.
  void aVariantCommandComparesTheWorkbenchWithTheUsersScript() {
    const QString out = scratch_.filePath(QStringLiteral("pipelines"));
    const QString command = wb::test::python3() + QStringLiteral(" ") + script() +
                            QStringLiteral(" {run_dir} --epochs {train.epochs} --limit-train {data.limit_train} --limit-val {data.limit_val}");
    const QStringList common = {QStringLiteral("try"), QStringLiteral("--set"), QStringLiteral("data.limit_train=1000"),
                                QStringLiteral("--set"), QStringLiteral("data.limit_val=300"), QStringLiteral("--set"),
                                QStringLiteral("train.epochs=2"), QStringLiteral("--repeats"), QStringLiteral("1"),
                                QStringLiteral("--out"), out, QStringLiteral("--details")};
    const auto r = cliRun(common + QStringList{QStringLiteral("--variant-command"), command, QStringLiteral("--label"), QStringLiteral("the script")});
    QVERIFY2(r.rc == 0, r.describe().constData());
    QVERIFY2(r.out.contains("workbench-cli run") && r.out.contains("whole pipeline"), r.describe().constData());
    const json doc = readJson(out + QStringLiteral("/try.json"));
    QCOMPARE(doc.value("variant_command", ""), command.toStdString());
    QCOMPARE(doc.value("same_config", true), false);  // not an A/A check: the pipelines differ
    const json run = doc["runs"][0];
    auto base = wb::records::loadRun((out + QStringLiteral("/") + QString::fromStdString(run["reference_dir"])).toStdString());
    auto var = wb::records::loadRun((out + QStringLiteral("/") + QString::fromStdString(run["variant_dir"])).toStdString());
    QVERIFY(base.ok() && var.ok());
    QCOMPARE(base->configAt("model.name"), json("lenet"));           // the workbench's trainer
    QCOMPARE(var->configAt("name"), json("python-fashion-mlp"));     // the script
    QCOMPARE(var->configAt("data.limit_train"), json(1000));         // given the baseline's settings
    const auto again = cliRun(common + QStringList{QStringLiteral("--variant-command"), command + QStringLiteral(" --workers 1")});
    QCOMPARE(again.rc, 2);
    QVERIFY2(QString::fromUtf8(again.err).contains(QStringLiteral("step 'variant' ran `")), again.describe().constData());
    // A bad placeholder in the variant's command is named as the variant's, before anything runs.
    const QString badOut = scratch_.filePath(QStringLiteral("pipelines-bad"));
    const auto bad = cliRun({QStringLiteral("try"), QStringLiteral("--out"), badOut, QStringLiteral("--variant-command"),
                             QStringLiteral("python3 x.py {run_dir} {nope}")});
    QCOMPARE(bad.rc, 2);
    QVERIFY2(QString::fromUtf8(bad.err).contains(QStringLiteral("the command of step 'variant': {nope} is not a placeholder")),
             bad.describe().constData());
    QVERIFY(!QFileInfo::exists(badOut + QStringLiteral("/runs")));
  }

  void aChangeTheCommandCannotTakeIsRefusedBeforeAnyRun() {
    const QString out = scratch_.filePath(QStringLiteral("precision"));
    const auto r = cliRun({QStringLiteral("try"), QStringLiteral("--command"),
                           QStringLiteral("python3 ") + script() + QStringLiteral(" {run_dir} --workers {workers}"),
                           QStringLiteral("--vary"), QStringLiteral("speedups.precision=bf16-mixed"), QStringLiteral("--out"), out});
    QCOMPARE(r.rc, 2);
    const QString said = QString::fromUtf8(r.err);
    QVERIFY2(said.contains(QStringLiteral("not measurable")) && said.contains(QStringLiteral("speedups.precision")), r.describe().constData());
    QVERIFY(!QFileInfo::exists(out + QStringLiteral("/runs/01-variant-p1")));
  }

  // The variant's script dies before it writes anything: the error names the arm and the
  // command, and the baseline's finished run is kept.
  void aCrashingArmIsNamedAndTheOtherRunsAreKept() {
    const QString out = scratch_.filePath(QStringLiteral("crash"));
    const QString command =
        QStringLiteral("sh -c 'if [ \"$1\" = 1 ]; then echo \"boom: CUDA error\" >&2; exit 7; fi; exec %1 %2 \"$0\"%3' {run_dir} {workers}")
            .arg(wb::test::python3(), script(), trainArgs());
    const auto r = cliRun({QStringLiteral("try"), QStringLiteral("--command"), command, QStringLiteral("--vary"),
                           QStringLiteral("speedups.workers=1"), QStringLiteral("--repeats"), QStringLiteral("1"),
                           QStringLiteral("--out"), out});
    QCOMPARE(r.rc, 1);
    const QString said = QString::fromUtf8(r.err);
    QVERIFY2(said.contains(QStringLiteral("variant, pair 1")) && said.contains(QStringLiteral("exited with code 7")) &&
                 said.contains(QStringLiteral("boom: CUDA error")) && said.contains(QStringLiteral("exit 7")),
             r.describe().constData());
    auto baseline = wb::records::loadRun((out + QStringLiteral("/runs/01-variant-p1-baseline")).toStdString());
    QVERIFY2(baseline.ok() && baseline->status == "ok", r.describe().constData());
    const json pairs = readJson(out + QStringLiteral("/pairs.json"));
    QCOMPARE(pairs["plan"].value("run_command", ""), command.toStdString());
  }

  // tune over the script: its trials stop at {train.max_steps}; the evaluation settings, which the
  // command cannot take, leave the search (said in tune.json); the pick is handed over as the
  // user's own command.
  void aTuneOfTheUsersScriptSearchesWhatItTakes() {
    const QString out = scratch_.filePath(QStringLiteral("tune"));
    const QString command = wb::test::python3() + QStringLiteral(" ") + script() +
                            QStringLiteral(" {run_dir} --workers {workers} --max-steps {train.max_steps}") + trainArgs();
    const auto r = cliRun({QStringLiteral("tune"), QStringLiteral("--command"), command, QStringLiteral("--only"), QStringLiteral("workers,eval"),
                           QStringLiteral("--set"), QStringLiteral("data.limit_train=1000"), QStringLiteral("--budget"), QStringLiteral("20m"),
                           QStringLiteral("--max-pairs"), QStringLiteral("2"), QStringLiteral("--out"), out},
                          600000);
    QVERIFY2(r.rc == 0, r.describe().constData());
    const json doc = readJson(out + QStringLiteral("/tune.json"));
    QCOMPARE(doc.value("run_command", ""), command.toStdString());
    QVERIFY2(doc.value("left_out", "").find("speedups.inference_eval") != std::string::npos, doc.dump(2).c_str());
    QVERIFY(!doc["trials"].empty());
    for (const json& t : doc["trials"]) {
      auto run = wb::records::loadRun(t.value("run_dir", ""));
      QVERIFY2(run.ok() && run->configAt("name") == json("python-fashion-mlp"), t.dump().c_str());  // the script's runs
    }
    QVERIFY2(!doc.value("best", "").empty(), doc.dump(2).c_str());
    QFile best(out + QStringLiteral("/best-command.sh"));
    QVERIFY(best.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(best.readAll());
    QVERIFY2(text.contains(script()) && text.contains(QStringLiteral("\"${1:-best-run}\"")), qPrintable(text));
  }

  void aTuneNeedsTheTrialsLength() {
    const auto r = cliRun({QStringLiteral("tune"), QStringLiteral("--command"), QStringLiteral("python3 train.py {run_dir} --workers {workers}"),
                           QStringLiteral("--out"), scratch_.filePath(QStringLiteral("tune-no-steps"))});
    QCOMPARE(r.rc, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(QStringLiteral("{train.max_steps}")), r.describe().constData());
  }

  // An experiment file with a "command" (the window's Save) is the user's script for `run`.
  void anExperimentFilesCommandIsWhatRunRuns() {
    const QString file = scratch_.filePath(QStringLiteral("mine.json"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    const json doc = {{"name", "mine"}, {"speedups", {{"workers", 0}}},
                      {"command", (wb::test::python3() + QStringLiteral(" ") + script() + QStringLiteral(" {run_dir} --workers {workers}") + trainArgs()).toStdString()}};
    f.write(QByteArray::fromStdString(doc.dump()));
    f.close();
    const QString dir = scratch_.filePath(QStringLiteral("from-file"));
    const auto r = cliRun({QStringLiteral("run"), QStringLiteral("--config"), file, QStringLiteral("--run-dir"), dir, QStringLiteral("--events-stdout")});
    QVERIFY2(r.rc == 0, r.describe().constData());
    QVERIFY2(r.out.contains("\"type\":\"step\"") && r.out.contains("\"type\":\"end\""), r.describe().constData());  // the script's events, streamed
    auto rec = wb::records::loadRun(dir.toStdString());
    QVERIFY(rec.ok());
    QCOMPARE(rec->configAt("name"), json("python-fashion-mlp"));
  }

  // The plan for two machines (this one's capabilities, bf16 native and emulated): what the
  // command has no placeholder for is left out on both, each for the reason that comes first there.
  void aLadderOfTheCommandLeavesOutWhatItCannotTake_data() {
    QTest::addColumn<bool>("bf16Native");
    QTest::newRow("a CPU with AVX-512 BF16") << true;
    QTest::newRow("a CPU without (AVX2 only)") << false;
  }
  void aLadderOfTheCommandLeavesOutWhatItCannotTake() {
    QFETCH(bool, bf16Native);
    const auto here = cliRun({QStringLiteral("capabilities"), QStringLiteral("--json")});
    QVERIFY2(here.rc == 0, here.describe().constData());
    json caps = json::parse(here.out.toStdString(), nullptr, false);
    QVERIFY2(caps.contains("speedups"), here.describe().constData());
    if (caps.value("cuda", false)) QSKIP("a CUDA machine plans 16-mixed: bf16's emulation is a CPU's question");
    caps["speedups"]["precision"]["values"]["bf16-mixed"]["native"] = bf16Native;
    if (!bf16Native) caps["speedups"]["precision"]["values"]["bf16-mixed"]["note"] = "bf16 is emulated here";
    const QString file = scratch_.filePath(bf16Native ? QStringLiteral("caps-native.json") : QStringLiteral("caps-emulated.json"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(caps.dump()));
    f.close();
    const auto r = cliRun({QStringLiteral("ladder"), QStringLiteral("--dry-run"), QStringLiteral("--lr-scaling"), QStringLiteral("none"),
                           QStringLiteral("--capabilities"), file, QStringLiteral("--command"),
                           QStringLiteral("python3 train.py {run_dir} --workers {workers} --devices {devices}")});
    QVERIFY2(r.rc == 0, r.describe().constData());
    const QStringList lines = QString::fromUtf8(r.out).split(QLatin1Char('\n'));
    auto lineOf = [&](const QString& key) {
      for (const QString& l : lines)
        if (l.contains(QStringLiteral("-") + key + QStringLiteral(" "))) return l;  // its folder stem: 04-precision
      return QString();
    };
    const QString precision = lineOf(QStringLiteral("precision"));
    QVERIFY2(precision.contains(QStringLiteral("skipped: ")), r.describe().constData());
    QVERIFY2(precision.contains(bf16Native ? QStringLiteral("not measurable with --command") : QStringLiteral("bf16 is emulated here")),
             r.describe().constData());
    QVERIFY2(!lineOf(QStringLiteral("workers")).contains(QStringLiteral("not measurable")), r.describe().constData());
    QVERIFY2(!lineOf(QStringLiteral("devices")).contains(QStringLiteral("not measurable")), r.describe().constData());
  }

  // Another machine's capabilities only plan: a ladder runs where it measures.
  void anotherMachinesCapabilitiesNeedADryRun() {
    const auto r = cliRun({QStringLiteral("ladder"), QStringLiteral("--capabilities"), scratch_.filePath(QStringLiteral("caps-native.json")),
                           QStringLiteral("--out"), scratch_.filePath(QStringLiteral("no-ladder"))});
    QCOMPARE(r.rc, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(QStringLiteral("needs --dry-run")), r.describe().constData());
    QVERIFY(!QFileInfo::exists(scratch_.filePath(QStringLiteral("no-ladder"))));
  }
};

QTEST_GUILESS_MAIN(TestCommandTry)
#include "test_command_try.moc"
