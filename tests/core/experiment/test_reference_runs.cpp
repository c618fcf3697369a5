// The reference runs' evaluation interval: twenty evaluations over the baseline's length, never more
// than ten an epoch, and a store folder that keeps the interval it was made with (its runs share one
// resolution, so a folder made under an earlier rule is reused as it is). A damaged store: a
// reference.json cut, emptied or of no record is named, kept aside and rebuilt from the run folders
// there (runs written as the writers write them); one of another experiment is refused naming the
// field; a gone or cut run is named so and runs again in a new folder. Their runs as real processes
// are tested through the CLI (tests/app/test_cli_try_parts.cpp).
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "report_fixture.h"
#include "wb/experiment/reference_runs.h"
#include "wb/proto/config_json.h"

using namespace wb::experiment;
using nlohmann::json;

namespace {

wb::Config lenet(int epochs, int batch = 64) {
  wb::Config c;
  c.train.epochs = epochs;
  c.train.batch_size = batch;
  return c;
}

namespace fs = std::filesystem;

std::string readText(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// What the store's log said (a temporary file read back).
struct Log {
  std::FILE* f = std::tmpfile();
  ~Log() { std::fclose(f); }
  QString text() const {
    std::fflush(f);
    std::rewind(f);
    std::string s;
    for (int c; (c = std::fgetc(f)) != EOF;) s += char(c);
    return QString::fromStdString(s);
  }
};

// A store of three finished reference runs of lenet(1) (seeds 1001-1003), as ensureReferenceRuns
// leaves it, and a fourth folder of another experiment (a larger lr) beside them.
struct Store {
  QTemporaryDir root;
  ReferenceOptions o;
  fs::path dir;
  int64_t every = 0;

  Store() {
    o.baseline = lenet(1);
    o.dataset_id = "0123456789abcdef";
    o.train_samples = 60000;
    o.store = root.path().toStdString();
    o.runs = 0;
    o.log = nullptr;
    auto made = ensureReferenceRuns(o);  // the folder and its record, no run
    dir = made->dir, every = made->eval_every_steps;
    json runs = json::array();
    for (uint64_t seed : {1001, 1002, 1003}) {
      writeRun("seed-" + std::to_string(seed), seed, o.baseline);
      runs.push_back({{"seed", seed}, {"dir", "runs/seed-" + std::to_string(seed)}, {"status", "ok"}});
    }
    wb::Config other = o.baseline;
    other.optim.lr = 0.5;
    writeRun("seed-1004", 1004, other);
    json doc = json::parse(std::ifstream(dir / "reference.json"));
    doc["runs"] = runs;
    std::ofstream(dir / "reference.json") << doc.dump(2);
    o.runs = 3;
  }

  // A finished run as the reference runs write it: their config (seed, evaluation interval), one
  // evaluation, summary.json.
  void writeRun(const std::string& name, uint64_t seed, wb::Config c, bool ended = true) {
    c.seed = seed;
    c.train.eval_every_steps = every;
    c.name = "lenet-reference-" + std::to_string(seed);
    fixture::FakeRun r;
    r.config = wb::proto::configToJson(c);
    r.start().step(1, 10, 640, 1.0, 1.0).step(1, 20, 1280, 2.0, 0.8).eval(1, 2.5, 0.8, 100, 1280);
    if (ended) r.end("ok", 3.0);
    r.write(QString::fromStdString((dir / "runs").string()), QString::fromStdString(name));
  }
  fs::path record() const { return dir / "reference.json"; }
};

}  // namespace

class TestReferenceRuns : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void oneEpochEvaluatesTenTimes() {
    // 60,000 images at 64 a step: 937 steps, an evaluation every 93.
    QCOMPARE(referenceEvalEvery(lenet(1), 60000), int64_t(93));
    QCOMPARE(referenceEvalEvery(lenet(2), 60000), int64_t(93));  // 20 over two epochs: still 10 an epoch
  }

  void aLongRunEvaluatesTwentyTimesNotTenAnEpoch() {
    QCOMPARE(referenceEvalEvery(lenet(10), 60000), int64_t(937 * 10 / 20));
    QCOMPARE(referenceEvalEvery(lenet(100), 60000), int64_t(937 * 100 / 20));
    // The devices' global batch sets the steps: two devices halve them.
    wb::Config two = lenet(10);
    two.speedups.devices = 2;
    QCOMPARE(referenceEvalEvery(two, 60000), int64_t(468 * 10 / 20));
  }

  void maxStepsEndsTheRunSooner() {
    wb::Config c = lenet(10);
    c.train.max_steps = 400;
    QCOMPARE(referenceEvalEvery(c, 60000), int64_t(93));  // 400 / 20 = 20 < 93: ten an epoch rules
    c.train.max_steps = 4000;
    QCOMPARE(referenceEvalEvery(c, 60000), int64_t(200));
    QCOMPARE(referenceEvalEvery(lenet(1), 10), int64_t(1));  // fewer steps than evaluations: each step
  }

  void aStoredFolderKeepsItsOwnInterval() {
    QTemporaryDir root;
    ReferenceOptions o;
    o.baseline = lenet(10);
    o.dataset_id = "0123456789abcdef";
    o.train_samples = 60000;
    o.store = root.path().toStdString();
    o.runs = 0;  // nothing to run: the folder alone
    o.log = nullptr;
    auto made = ensureReferenceRuns(o);
    QVERIFY2(made.ok(), made.ok() ? "" : made.error().message.c_str());
    QCOMPARE(made->eval_every_steps, int64_t(468));
    QCOMPARE(made->resolution, 468.0 * 64);
    const std::filesystem::path file = made->dir / "reference.json";
    json doc = json::parse(std::ifstream(file));
    QCOMPARE(doc["eval_every_steps"].get<int64_t>(), int64_t(468));
    // A folder made when the rule was ten an epoch: its interval stays, and so does its resolution.
    doc["eval_every_steps"] = 93;
    std::ofstream(file) << doc.dump(2);
    auto again = ensureReferenceRuns(o);
    QVERIFY2(again.ok(), again.ok() ? "" : again.error().message.c_str());
    QCOMPARE(again->eval_every_steps, int64_t(93));
    QCOMPARE(again->resolution, 93.0 * 64);
    QCOMPARE(json::parse(std::ifstream(file))["eval_every_steps"].get<int64_t>(), int64_t(93));
  }

  // A reference.json that cannot be read is named (why), kept aside as it was, and rebuilt from the
  // run folders that are there: the three of this experiment are reused, none runs again; the
  // folder of another experiment is named and not taken.
  void anUnreadableRecordIsNamedAndRebuiltFromItsRuns_data() {
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QString>("why");
    QTest::newRow("cut mid-file") << "cut" << "cut mid-file";
    QTest::newRow("emptied") << "" << "it is empty";
    QTest::newRow("not a record") << "[1, 2]" << "JSON array, not a record";
    QTest::newRow("runs not a list") << "runs" << "its runs are not a list";
  }
  void anUnreadableRecordIsNamedAndRebuiltFromItsRuns() {
    QFETCH(QString, damage);
    QFETCH(QString, why);
    Store s;
    std::string bytes = damage.toStdString();
    if (damage == QLatin1String("cut")) bytes = readText(s.record()).substr(0, readText(s.record()).size() / 2);
    if (damage == QLatin1String("runs")) {
      json doc = json::parse(std::ifstream(s.record()));
      doc["runs"] = "seed-1001";
      bytes = doc.dump();
    }
    std::ofstream(s.record(), std::ios::binary | std::ios::trunc) << bytes;
    Log log;
    s.o.log = log.f;
    auto refs = ensureReferenceRuns(s.o);
    const QString said = log.text();
    QVERIFY2(refs.ok(), refs.ok() ? "" : refs.error().message.c_str());
    QCOMPARE(refs->reused, 3);
    QCOMPARE(refs->ran, 0);
    QVERIFY2(said.contains(QString::fromStdString(s.record().string()) + QStringLiteral(" is unreadable: ")) && said.contains(why),
             qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("kept as reference.unreadable-1.json")) && said.contains(QStringLiteral("3 reference run(s) taken")),
             qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("seed-1004 is not taken")) && said.contains(QStringLiteral("optim.lr")), qPrintable(said));
    QCOMPARE(readText(s.dir / "reference.unreadable-1.json"), bytes);  // nothing written is lost
    const json rebuilt = json::parse(std::ifstream(s.record()));
    QCOMPARE(rebuilt["runs"].size(), size_t(3));
    QCOMPARE(rebuilt["runs"][2]["dir"].get<std::string>(), std::string("runs/seed-1003"));
    QCOMPARE(rebuilt["eval_every_steps"].get<int64_t>(), s.every);
  }

  // Another experiment's record (however its fields are typed) is refused naming what differs, and
  // left as it is.
  void anotherExperimentsRecordIsRefused_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("named");
    QTest::newRow("its lr") << "lr" << "optim.lr";
    QTest::newRow("a key of another type") << "key" << "another experiment";
  }
  void anotherExperimentsRecordIsRefused() {
    QFETCH(QString, field);
    QFETCH(QString, named);
    Store s;
    json doc = json::parse(std::ifstream(s.record()));
    if (field == QLatin1String("lr")) doc["config"]["optim"]["lr"] = 0.5;
    else doc["key"] = 5;
    std::ofstream(s.record(), std::ios::trunc) << doc.dump(2);
    const std::string before = readText(s.record());
    auto refs = ensureReferenceRuns(s.o);
    QVERIFY(!refs.ok());
    QCOMPARE(int(refs.error().code), int(wb::Errc::InvalidConfig));
    QVERIFY2(QString::fromStdString(refs.error().message).contains(named), refs.error().message.c_str());
    QCOMPARE(readText(s.record()), before);
  }

  // A run folder that is gone is named gone, one cut (no summary.json) named cut, and each runs
  // again in a new folder: never a name the record had, never one that exists. (The executor here
  // stops before it runs anything: what matters is where the runs would go.)
  void aGoneOrCutRunIsNamedAndRunsAgainInANewFolder() {
    Store s;
    fs::remove_all(s.dir / "runs" / "seed-1003");
    fs::remove_all(s.dir / "runs" / "seed-1002");
    s.writeRun("seed-1002", 1002, s.o.baseline, false);
    std::vector<std::string> handed;
    s.o.run_many = [&](const std::vector<ConfigRun>& runs) -> wb::Result<std::vector<ConfigRunEnd>> {
      for (const auto& r : runs) handed.push_back(fs::relative(r.dir, s.dir).string());
      return wb::makeError(wb::Errc::Cancelled, "stopped");
    };
    Log log;
    s.o.log = log.f;
    auto refs = ensureReferenceRuns(s.o);
    QVERIFY(!refs.ok());
    const QString said = log.text();
    const QString runs = QString::fromStdString((s.dir / "runs").string());
    QVERIFY2(said.contains(runs + QStringLiteral("/seed-1003 (seed 1003) is gone: it runs again in a new folder")), qPrintable(said));
    QVERIFY2(said.contains(runs + QStringLiteral("/seed-1002 (seed 1002) was cut short")), qPrintable(said));
    QCOMPARE(handed, (std::vector<std::string>{"runs/seed-1002-r2", "runs/seed-1003-r2"}));
    QVERIFY(fs::exists(s.dir / "runs" / "seed-1002" / "events.jsonl"));  // the cut run's folder is kept
  }
};

QTEST_GUILESS_MAIN(TestReferenceRuns)
#include "test_reference_runs.moc"
