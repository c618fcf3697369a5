// The search's rules without runs: the space this machine's plan gives, the promotion of one
// round, the batch sizes and their lr, the record's round trip, and what is handed over.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>

#include "wb/common/format.h"
#include "wb/experiment/composed_try.h"
#include "wb/ladder/ladder.h"
#include "wb/proto/config_json.h"
#include "wb/tune/batch_finder.h"
#include "wb/tune/tune.h"

using nlohmann::json;

namespace {

// A CPU machine with 2 cores, bf16 and 2 processes available, a stored probe of 2 workers.
json cpuCapabilities() {
  return json::parse(R"({"cores": 2, "cuda": false, "gpus": 0,
    "speedups": {"workers": {"available": true, "max": 256, "probe": {"recommended": 2}},
                 "pin_memory": {"available": false, "note": "needs CUDA"},
                 "devices": {"available": true, "max": 2, "kind": "cpu-processes"},
                 "precision": {"available": true, "values": {"32-true": {"available": true}, "bf16-mixed": {"available": true},
                                                             "16-mixed": {"available": false, "note": "needs CUDA"}}},
                 "early_stopping": {"available": true}, "sharding": {"available": true},
                 "inference_eval": {"available": true}}})");
}

wb::tune::TuneOptions options() {
  wb::tune::TuneOptions o;
  o.base = wb::speedupsOff(wb::Config{});
  o.plan = *wb::ladder::planForMachine(o.base, cpuCapabilities(), {}, {});
  o.batches = {64, 128};
  o.lr_rule = "linear";
  o.train_images = 60000;
  o.val_images = 10000;
  return o;
}

wb::proto::TuneTrial trial(const char* id, double epoch, const char* status = "ok", bool contended = false) {
  wb::proto::TuneTrial t;
  t.candidate = id, t.epoch_s = epoch, t.status = status, t.contended = contended;
  return t;
}

}  // namespace

class TestTune : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // The grid is what the plan can run: pin memory (needs CUDA) is not searched, sharding rides
  // on 2 devices, the larger batch trains at a scaled lr, every candidate validates.
  void theSpaceIsWhatThisMachineCanRun() {
    const wb::tune::Space s = wb::tune::buildSpace(options());
    bool pinNotSearched = false;
    for (const auto& d : s.dimensions)
      if (d.key == "speedups.pin_memory") pinNotSearched = !d.searched && d.note.find("CUDA") != std::string::npos;
    QVERIFY(pinNotSearched);
    bool leversNotSearched = false;  // unless asked for (--only levers)
    for (const auto& d : s.dimensions)
      if (d.key == "levers") leversNotSearched = !d.searched && d.note.find("--only") != std::string::npos;
    QVERIFY(leversNotSearched);
    // workers {0, 2} × devices {1, 2, 2 + zero1} × precision {32, bf16} × batch {64, 128}
    QCOMPARE(int(s.train.size()), 2 * 3 * 2 * 2);
    QCOMPARE(int(s.eval.size()), 4);  // inference eval {off, on} × eval batch {256, 512}
    QCOMPARE(s.train.front().label, std::string("as given"));
    bool sawSharded = false, sawScaledBatch = false;
    for (const auto& c : s.train) {
      const wb::Config cfg = *wb::proto::configFromJson(c.config);
      QVERIFY2(wb::validate(cfg).empty(), c.label.c_str());
      if (cfg.speedups.sharding != "off") {
        sawSharded = true;
        QVERIFY(cfg.speedups.devices > 1);
      }
      if (cfg.train.batch_size == 128) {
        sawScaledBatch = true;
        QCOMPARE(cfg.optim.lr_base_batch, 64);
        QCOMPARE(cfg.optim.lr_scaling, std::string("linear"));
      }
    }
    QVERIFY(sawSharded && sawScaledBatch);
  }

  // A candidate is composed from what every change in it does to the math: loader workers keep it,
  // two devices, a larger batch or bf16 change it whatever rides with them, so a finalist that
  // carries one of those trains to the target against the reference runs (a search once reported
  // workers 2 + devices 2 + batch 256 as "same samples to target (keeps the math)").
  void aCandidateKeepsTheMathOnlyWhenEveryChangeDoes() {
    const wb::tune::TuneOptions o = options();
    const wb::tune::Space s = wb::tune::buildSpace(o);
    int mixed = 0, keeping = 0;
    for (const auto& c : s.train) {
      const wb::Config cfg = *wb::proto::configFromJson(c.config);
      wb::experiment::TryOptions t;
      t.baseline = o.base;
      t.variant = cfg;
      const bool changes = cfg.speedups.devices > 1 || cfg.train.batch_size != o.base.train.batch_size ||
                           cfg.speedups.precision != o.base.speedups.precision;
      const bool withWorkers = cfg.speedups.workers != o.base.speedups.workers;
      QVERIFY2(wb::experiment::referenceRunsExpected(t) == changes, c.label.c_str());
      mixed += changes && withWorkers;
      keeping += !changes && withWorkers;
    }
    QVERIFY(mixed > 0 && keeping == 1);  // workers 2 alone keeps it; with anything else it does not
  }

  void onlyNarrowsTheSpace() {
    auto o = options();
    o.only = {"precision"};
    const wb::tune::Space s = wb::tune::buildSpace(o);
    QCOMPARE(int(s.train.size()), 2);
    QVERIFY(s.eval.empty());
    // The levers, asked for by name: one lever at a time (channels-last, the multi-tensor step and
    // accumulation on 2 devices can help here; the cache, cuDNN and TF32 cannot).
    o.only = {"levers"};
    const wb::tune::Space levers = wb::tune::buildSpace(o);
    QCOMPARE(int(levers.train.size()), 4);
    QStringList labels;
    for (const auto& c : levers.train) labels << QString::fromStdString(c.label);
    QCOMPARE(labels, (QStringList{QStringLiteral("as given"), QStringLiteral("channels-last on"),
                                  QStringLiteral("multi-tensor step on"), QStringLiteral("accumulate 4 micro-batches")}));
    o.only = {"pin_memory"};  // not available here: nothing to search
    const wb::tune::Space none = wb::tune::buildSpace(o);
    QCOMPARE(int(none.train.size() + none.eval.size()), 1);
  }

  // The fastest third go on, and any within the noise of the last of them; failed and contended
  // trials never do.
  void promotionKeepsTheFastestAndTheirTies() {
    std::vector<wb::proto::TuneTrial> rung{trial("a", 10), trial("b", 12), trial("c", 12.3), trial("d", 20), trial("e", 5, "failed"),
                                           trial("f", 4, "ok", true)};
    auto [ids, why] = wb::tune::promote(rung, 2, 0.05);
    QCOMPARE(ids, (std::vector<std::string>{"a", "b", "c"}));
    QVERIFY(why.find("failed trial") != std::string::npos);
    auto [strict, _] = wb::tune::promote(rung, 2, 0.0);
    QCOMPARE(strict, (std::vector<std::string>{"a", "b"}));
    // Too few measured quietly: a contended trial fills the place, and the rule says so.
    std::vector<wb::proto::TuneTrial> busy{trial("a", 10), trial("f", 4, "ok", true), trial("g", 3, "ok", true)};
    auto [filled, busyWhy] = wb::tune::promote(busy, 2, 0.0);
    QCOMPARE(filled, (std::vector<std::string>{"a", "g"}));
    QVERIFY(busyWhy.find("contention") != std::string::npos);
  }

  // Every finalist missed the target: the second round takes the fastest other candidates that do
  // not carry everything the missing ones shared (here two devices and bf16 together).
  void aSecondRoundLeavesOutWhatTheMissingFinalistsShared() {
    wb::proto::TuneRecord r;
    auto add = [&](const std::string& id, json settings, double epoch) {
      r.candidates.push_back({id, id, settings, json::object()});
      auto t = trial(id.c_str(), epoch);
      t.stage = "r", t.rung = 0;
      r.trials.push_back(t);
    };
    add("c01", json::object(), 4.5);
    add("c03", {{"speedups.devices", 2}}, 4.5);
    add("c07", {{"speedups.precision", "bf16-mixed"}}, 3.0);
    add("c08", {{"speedups.workers", 2}, {"speedups.precision", "bf16-mixed"}}, 3.5);
    add("c09", {{"speedups.devices", 2}, {"speedups.precision", "bf16-mixed"}}, 2.7);
    add("c10", {{"speedups.workers", 2}, {"speedups.devices", 2}, {"speedups.precision", "bf16-mixed"}}, 2.6);
    add("c11", {{"speedups.sharding", "zero1"}, {"speedups.precision", "bf16-mixed"}}, 2.9);
    r.candidates.back().config = {{"speedups", {{"devices", 2}, {"sharding", "zero1"}, {"precision", "bf16-mixed"}}}};  // sharding brings two devices
    for (const char* id : {"c09", "c10"}) {
      wb::proto::TuneFinalist f;
      f.candidate = id, f.verdict = "did not reach the target";
      r.finals.push_back(f);
    }
    QCOMPARE(wb::tune::secondChance(r, 2), (std::vector<std::string>{"c07", "c08"}));
    r.finals.back().verdict = "best";  // one finalist did reach it: no second round
    QVERIFY(wb::tune::secondChance(r, 2).empty());
  }

  void batchSizesAreNotOnlyPowersOfTwo() {
    QCOMPARE(wb::tune::batchSizes(64, 600), (std::vector<int>{64, 96, 128, 192, 256, 384, 512}));
    QCOMPARE(wb::tune::batchSizes(10, 30), (std::vector<int>{10, 15, 24}));
    QVERIFY(wb::tune::looksLikeAllocationFailure("rank 0: std::bad_alloc"));
    QVERIFY(wb::tune::looksLikeAllocationFailure("CUDA out of memory. Tried to allocate 2.00 GiB"));
    QVERIFY(!wb::tune::looksLikeAllocationFailure("data.dataset: no such folder"));
    const wb::Config c = wb::tune::withBatch(wb::Config{}, 256, "sqrt");
    QCOMPARE(c.optim.lr_base_batch, 64);
    QCOMPARE(c.optim.lr_scaling, std::string("sqrt"));
    QCOMPARE(wb::tune::withBatch(wb::Config{}, 64, "sqrt").optim.lr_base_batch, 0);  // the base: nothing scaled
  }

  void epochEstimateAddsEvaluation() {
    wb::proto::TuneTrial t;
    t.train_samples_per_s = 6000;
    t.eval_images_per_s = 20000;
    QCOMPARE(*wb::tune::epochEstimate(t, 60000, 10000), 10.5);
    t.train_samples_per_s.reset();
    QVERIFY(!wb::tune::epochEstimate(t, 60000, 10000));
  }

  void trialsAreShortAndSteady() {
    wb::Config c;
    c.train.batch_size = 100;
    c.speedups.devices = 2;
    c.speedups.early_stopping.patience = 3;
    const wb::Config t = wb::tune::trialConfig(c, 6000, 512);
    QCOMPARE(t.train.max_steps, int64_t(30));
    QCOMPARE(t.train.epochs, 1);
    QCOMPARE(t.data.limit_val, int64_t(512));
    QCOMPARE(t.speedups.early_stopping.patience, 0);
    QVERIFY(t.train.log_every <= 5);
  }

  // tune.json keeps fields it does not know (a newer writer's) and reads back what it wrote.
  void theRecordRoundTrips() {
    wb::proto::TuneRecord r;
    r.status = "ok";
    r.best = "c03";
    r.trials = {trial("c03", 7.5)};
    r.space = {{"speedups.workers", {"0", "2"}, "the probe's", true}};
    json j = wb::proto::toJson(r);
    j["from_the_future"] = 42;
    j["trials"].push_back("not an object");
    const wb::proto::TuneRecord back = wb::proto::readTuneRecord(j);
    QCOMPARE(back.best, std::string("c03"));
    QCOMPARE(int(back.trials.size()), 1);
    QCOMPARE(*back.trials[0].epoch_s, 7.5);
    QCOMPARE(back.space[0].values, (std::vector<std::string>{"0", "2"}));
    QCOMPARE(wb::proto::toJson(back)["from_the_future"].get<int>(), 42);
  }

  // The finals' figures read as the answers do: the reading before the interval, a too-wide
  // interval as "too noisy to say", never a bare "[lo, hi] within noise".
  void theFinalsReadAsTheAnswersDo() {
    wb::proto::TuneRecord r;
    wb::proto::TuneFinalist f;
    f.candidate = "c1", f.label = "workers 2", f.pairs = 3, f.verdict = "best";
    f.estimate = {{"to_target", {{"point", 1.05}, {"lo", 0.88}, {"hi", 1.24}, {"verdict", "within noise"}, {"level", 0.95},
                                 {"min_effect", 0.02}, {"pairs", 3}}},
                  {"throughput", {{"point", 1.01}, {"lo", 0.03}, {"hi", 30.1}, {"verdict", "within noise"}, {"level", 0.95},
                                  {"min_effect", 0.02}, {"pairs", 3}}}};
    r.finals = {f};
    const wb::render::Table t = wb::tune::finalsTable(r);
    QCOMPARE(QString::fromStdString(t.rows.at(0).at(3).text), QString::fromUtf8("1.05×, not clear yet (95 %: 0.88-1.24×)"));
    QCOMPARE(QString::fromStdString(t.rows.at(0).at(4).text), QStringLiteral("too noisy to say"));
    QCOMPARE(QString::fromStdString(t.rows.at(0).at(5).text), QString::fromUtf8("–"));
  }

  // What is handed over says the same settings three ways.
  void theTakeAwaySaysTheSettings() {
    wb::Config c;
    c.speedups.devices = 2;
    c.speedups.workers = 2;
    c.speedups.precision = "bf16-mixed";
    c.speedups.sharding = "zero1";
    c.train.batch_size = 128;
    const std::string torchrun = wb::tune::torchrunCommand(c), lightning = wb::tune::lightningArguments(c);
    QVERIFY2(torchrun.find("--nproc-per-node 2") != std::string::npos, torchrun.c_str());
    QVERIFY2(torchrun.find("workbench-cli worker --config") != std::string::npos, torchrun.c_str());
    const std::string sbatch = wb::tune::sbatchScript(c, "/shared/it's here/best.json");
    for (const char* s : {"#SBATCH --ntasks=2", "srun workbench-cli worker --config", "SLURM_JOB_NODELIST",
                          "'/shared/it'\\''s here/best.json'"})
      QVERIFY2(sbatch.find(s) != std::string::npos, (std::string(s) + " in\n" + sbatch).c_str());
    for (const char* s : {"precision=\"bf16-mixed\"", "devices=2", "strategy=\"ddp\"", "batch_size=128", "num_workers=2", "pin_memory=False"})
      QVERIFY2(lightning.find(s) != std::string::npos, (std::string(s) + " in\n" + lightning).c_str());
  }

  // A search writes only into a new or empty folder or one of its own searches; anything else is
  // refused, naming what the folder holds.
  void aFolderThatHoldsNoSearchIsRefusedByName() {
    QTemporaryDir root;
    const std::filesystem::path dir = root.path().toStdString();
    const std::vector<std::string> records{"tune.json", "batch/batch.json"};
    QVERIFY(wb::tune::checkSearchFolder(dir / "new", records).ok());
    std::filesystem::create_directories(dir / "empty");
    QVERIFY(wb::tune::checkSearchFolder(dir / "empty", records).ok());
    std::filesystem::create_directories(dir / "cut" / "batch" / "runs");
    std::ofstream(dir / "cut" / "batch" / "batch.json") << "{}";
    QVERIFY2(wb::tune::checkSearchFolder(dir / "cut", records).ok(), "a search cut in its batch phase continues");
    std::filesystem::create_directories(dir / "other" / "photos");
    std::ofstream(dir / "other" / "notes.txt") << "mine";
    const auto refused = wb::tune::checkSearchFolder(dir / "other", records);
    QVERIFY(!refused.ok());
    QCOMPARE(int(refused.error().code), int(wb::Errc::InvalidConfig));
    const std::string& m = refused.error().message;
    QVERIFY2(m.find("notes.txt") != std::string::npos && m.find("photos/") != std::string::npos && m.find("tune.json") != std::string::npos,
             m.c_str());
    QVERIFY(!wb::tune::checkSearchFolder(dir / "other" / "notes.txt", records).ok());
  }

  // A search's record that cannot be read (cut mid-file, emptied, no record) or is another search's
  // is refused naming it, before any trial runs, and left as it is: tune.json, and the batch
  // finder's batch.json.
  void aDamagedSearchRecordIsNamedAndKept_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QString>("named");
    for (const char* file : {"tune.json", "batch.json"}) {
      const QString f = QString::fromLatin1(file);
      QTest::addRow("%s cut mid-file", file) << f << R"({"candidates": [{"id": "baseline", "config": {"train")" << "is unreadable: it is cut mid-file";
      QTest::addRow("%s emptied", file) << f << "" << "is unreadable: it is empty";
      QTest::addRow("%s not a record", file) << f << "3" << "is unreadable: it holds a JSON number";
    }
    QTest::addRow("tune.json of another search") << "tune.json" << R"({"candidates": [{"id": "baseline", "config": {"optim": {"lr": 9}}}]})"
                                                 << "holds another search";
    QTest::addRow("batch.json of another search") << "batch.json" << R"({"lr_rule": "sqrt", "config": {}})"
                                                  << "holds another batch search";
  }
  void aDamagedSearchRecordIsNamedAndKept() {
    QFETCH(QString, file);
    QFETCH(QString, damage);
    QFETCH(QString, named);
    QTemporaryDir root;
    const std::filesystem::path out = root.path().toStdString(), record = out / file.toStdString();
    std::ofstream(record) << damage.toStdString();
    std::atomic<bool> stop{true};  // nothing may run either way
    std::string error;
    if (file == QLatin1String("tune.json")) {
      auto o = options();
      o.out = out, o.hooks.stop = &stop, o.hooks.log = nullptr;
      auto r = wb::tune::runTune(o);
      if (!r.ok()) error = r.error().message;
    } else {
      wb::tune::BatchOptions o;
      o.base = options().base, o.out = out, o.train_images = 60000, o.hooks.stop = &stop, o.hooks.log = nullptr;
      auto r = wb::tune::findBatch(o);
      if (!r.ok()) error = r.error().message;
    }
    QVERIFY2(error.find(record.string()) != std::string::npos || error.find(out.string()) != std::string::npos, error.c_str());
    QVERIFY2(QString::fromStdString(error).contains(named), error.c_str());
    std::ifstream in(record);
    QCOMPARE(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), damage.toStdString());
  }

  void budgetsReadAsPeopleWriteThem() {
    QCOMPARE(*wb::parseDuration("90", "--budget"), 90.0);
    QCOMPARE(*wb::parseDuration("10m", "--budget"), 600.0);
    QCOMPARE(*wb::parseDuration("1h30m", "--budget"), 5400.0);
    QCOMPARE(*wb::parseDuration("1.5h", "--budget"), 5400.0);
    for (const char* bad : {"", "ten", "-5m", "0", "5x", "1h30"}) {
      auto r = wb::parseDuration(bad, "--budget");
      QVERIFY2(!r.ok(), bad);
      QVERIFY(r.error().message.find("--budget") != std::string::npos);
    }
  }
};

QTEST_APPLESS_MAIN(TestTune)
#include "test_tune.moc"
