// Runs an experiment starts warm (forked from the process that loaded LibTorch once,
// wb/launch/warm_start.h) are the runs it would start cold (WB_WARM_STARTS=0, each rank exec'd):
// `noise --runs 2` of the same tiny configuration both ways gives the same events (each step's
// loss, each evaluation), the same summary (status, steps, samples, accuracy) and the same
// folder; `run` (the window's runs) likewise; a try by parts, whose measuring commands start warm
// too, gives the same math check.
// No test asserts a time.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "../support/machine.h"
#include "../support/proc.h"

using nlohmann::json;

namespace {

QStringList tinySets() {
  QStringList sets;
  for (const char* kv : {"model.name=lenet", "data.limit_train=640", "data.limit_val=200", "train.epochs=2",
                         "train.threads=1", "train.batch_size=32", "train.log_every=1"})
    sets << QStringLiteral("--set") << QString::fromLatin1(kv);
  return sets;
}

wb::test::ProcResult cli(const QStringList& args, bool warm, const QString& noiseDir) {
  auto env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("WB_NOISE_DIR"), noiseDir);
  if (warm) env.remove(QStringLiteral("WB_WARM_STARTS"));
  else env.insert(QStringLiteral("WB_WARM_STARTS"), QStringLiteral("0"));
  return wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, 600000, env);
}

json readJson(const QString& file) {
  QFile f(file);
  if (!f.open(QIODevice::ReadOnly)) return json();
  return json::parse(f.readAll().toStdString(), nullptr, false);
}

// What a run did, without its clocks: each event's type and rank in order, each step's loss and
// samples, each evaluation's loss and accuracy.
json whatItDid(const QString& runDir) {
  QFile f(runDir + QStringLiteral("/events.jsonl"));
  if (!f.open(QIODevice::ReadOnly)) return json();
  json out = json::array();
  for (const QByteArray& line : f.readAll().split('\n')) {
    const json ev = json::parse(line.toStdString(), nullptr, false);
    if (!ev.is_object()) continue;
    const std::string type = ev.value("type", std::string());
    json kept{{"type", type}, {"rank", ev.value("rank", -2)}};
    for (const char* key : {"step", "epoch", "loss", "samples", "val_loss", "val_acc", "status"})
      if (ev.contains(key) && (type == "step" || type == "eval" || type == "end")) kept[key] = ev[key];
    out.push_back(kept);
  }
  return out;
}

// whatItDid, each rank's events together (ranks' lines interleave as they come).
json byRank(json did) {
  std::stable_sort(did.begin(), did.end(), [](const json& a, const json& b) { return a.value("rank", -2) < b.value("rank", -2); });
  return did;
}

json summaryFigures(const QString& runDir) {
  const json s = readJson(runDir + QStringLiteral("/summary.json"));
  json out;
  for (const char* key : {"status", "steps", "epochs", "train_samples", "best_val_acc", "final_val_acc", "final_val_loss"})
    if (s.contains(key)) out[key] = s[key];
  return out;
}

QStringList filesOf(const QString& runDir) {
  QStringList files;
  QDirIterator it(runDir, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) files << QDir(runDir).relativeFilePath(it.next());
  files.sort();
  return files;
}

}  // namespace

class TestCliWarmStart : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void init() { WB_NEED(wb::test::missingFashionMnist()); }

  void aRunStartedWarmIsTheRunStartedCold() {
    QTemporaryDir root;
    std::map<bool, QString> out;
    for (bool warm : {false, true}) {
      out[warm] = root.filePath(warm ? QStringLiteral("warm") : QStringLiteral("cold"));
      const auto r = cli(QStringList{QStringLiteral("noise"), QStringLiteral("--runs"), QStringLiteral("2"),
                                     QStringLiteral("--out"), out[warm], QStringLiteral("--no-store")} + tinySets(),
                         warm, root.filePath(QStringLiteral("noise")));
      // A loaded host leaves no spread to measure (exit 1, said): the runs are made all the same.
      QVERIFY2(r.rc == 0 || r.err.contains("finished uncontended"), r.describe().constData());
    }
    for (const char* aa : {"/aa-1", "/aa-2"}) {
      const QString cold = out[false] + QString::fromLatin1(aa), warm = out[true] + QString::fromLatin1(aa);
      const json coldDid = whatItDid(cold), warmDid = whatItDid(warm);
      QVERIFY2(coldDid.size() > 20, coldDid.dump().c_str());  // a step event per step, two evaluations
      QCOMPARE(warmDid.dump(), coldDid.dump());
      const json coldSummary = summaryFigures(cold);
      QCOMPARE(coldSummary.value("status", std::string()), std::string("ok"));
      QCOMPARE(summaryFigures(warm).dump(), coldSummary.dump());
      QCOMPARE(filesOf(warm), filesOf(cold));
      QCOMPARE(readJson(warm + QStringLiteral("/env.json"))["threads"].dump(), readJson(cold + QStringLiteral("/env.json"))["threads"].dump());
      QCOMPARE(readJson(warm + QStringLiteral("/env.json")).value("rank_start", std::string()), std::string("warm"));
      QCOMPARE(readJson(cold + QStringLiteral("/env.json")).value("rank_start", std::string()), std::string("cold"));
    }
  }

  // `workbench-cli run` (what the window starts, and a user) starts its rank warm too, and it is
  // the run started cold: the same events, summary and folder; env.json says how the rank started.
  // Two ranks (devices 2): each rank's events are the cold run's.
  void theRunCommandStartsItsRanksWarm_data() {
    QTest::addColumn<int>("devices");
    QTest::newRow("one rank") << 1;
    QTest::newRow("two ranks") << 2;
  }
  void theRunCommandStartsItsRanksWarm() {
    QFETCH(int, devices);
    QTemporaryDir root;
    std::map<bool, QString> dir;
    for (bool warm : {false, true}) {
      dir[warm] = root.filePath(warm ? QStringLiteral("warm") : QStringLiteral("cold"));
      const auto r = cli(QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), dir[warm], QStringLiteral("--set"),
                                     QStringLiteral("speedups.devices=%1").arg(devices)} +
                             tinySets(),
                         warm, root.filePath(QStringLiteral("noise")));
      QVERIFY2(r.rc == 0, r.describe().constData());
      QCOMPARE(readJson(dir[warm] + QStringLiteral("/env.json")).value("rank_start", std::string()),
               std::string(warm ? "warm" : "cold"));
    }
    const json coldDid = byRank(whatItDid(dir[false]));
    QVERIFY2(coldDid.size() > 20, coldDid.dump().c_str());
    QCOMPARE(byRank(whatItDid(dir[true])).dump(), coldDid.dump());
    QCOMPARE(summaryFigures(dir[false]).value("status", std::string()), std::string("ok"));
    QCOMPARE(summaryFigures(dir[true]).dump(), summaryFigures(dir[false]).dump());
    QCOMPARE(filesOf(dir[true]), filesOf(dir[false]));
  }

  // A try by parts starts its measuring command (the segments, with the math check first) warm:
  // the math check's losses are the cold one's.
  void aMeasuringCommandStartedWarmChecksTheSameMath() {
    QTemporaryDir root;
    std::map<bool, json> math;
    for (bool warm : {false, true}) {
      const QString out = root.filePath(warm ? QStringLiteral("warm") : QStringLiteral("cold"));
      const auto r = cli(QStringList{QStringLiteral("try"), QStringLiteral("--json"), QStringLiteral("--out"), out,
                                     QStringLiteral("--references"), root.filePath(QStringLiteral("refs")),
                                     QStringLiteral("--vary"), QStringLiteral("speedups.channels_last=true")} +
                             tinySets(),
                         warm, root.filePath(QStringLiteral("noise")));
      QVERIFY2(r.rc == 0, r.describe().constData());
      math[warm] = readJson(out + QStringLiteral("/math.json"));
      QVERIFY2(math[warm].value("checked", false), math[warm].dump().c_str());
      QVERIFY2(QFile::exists(out + QStringLiteral("/logs/segments.log")), "the segments' process ran");
    }
    for (bool warm : {false, true}) math[warm].erase("total_s");
    QCOMPARE(math[true]["rows"].dump(), math[false]["rows"].dump());
    QCOMPARE(math[true].value("verdict", std::string()), math[false].value("verdict", std::string()));
  }
};

QTEST_GUILESS_MAIN(TestCliWarmStart)
#include "test_cli_warm_start.moc"
