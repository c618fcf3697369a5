// summary.json as a type: what toJson writes is what readRunSummary reads back, under the keys
// old run folders hold; an older writer's summary (a literal here) still reads; what a reader
// does not know survives a read-modify-write; a missing, null or mistyped field keeps the
// default and nothing throws.
#include <QtTest/QtTest>

#include <cmath>
#include <set>
#include <string>

#include "wb/proto/run_summary.h"

using nlohmann::json;
using wb::proto::RunSummary;

namespace {

std::set<std::string> keysOf(const json& j) {
  std::set<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.insert(it.key());
  return keys;
}

// summary.json's keys as run folders hold them: a key renamed in run_summary.cpp breaks this
// list, so a rename is a decision, not an accident.
const std::set<std::string> kSummaryKeys = {
    "status", "run_id", "name", "run_dir", "error", "message", "failed_rank", "log_tail", "training_status",
    "events_lost", "events_late", "events_error", "device", "world_size", "epochs", "steps", "optimizer_steps",
    "samples", "wall_s", "train_samples", "train_s", "train_samples_per_s", "eval_s", "checkpoint_s",
    "time_to_first_step_s", "first_step_unix", "run_wall_s", "launcher_wall_s", "cpu", "best_val_acc",
    "final_val_acc", "best_val_loss", "peak_mem", "amp_skipped", "best_epoch", "best_value",
    "best_weights_restored", "best_weights_note", "target_val_acc", "samples_to_target", "steps_to_target", "flops"};
const std::set<std::string> kCpuKeys = {"cores", "asked_cores", "used_cores", "other_load_cores", "contended",
                                        "shared_cores", "shared", "note",
                                        "busiest_others", "threads", "min_threads", "process_cores", "machine_busy_cores", "other_cores"};

RunSummary everyField() {
  RunSummary s;
  s.status = "failed";
  s.run_id = "r1";
  s.name = "fmnist";
  s.run_dir = "/runs/r1";
  s.error = "rank 1 exited with code 1";
  s.message = "stopped";
  s.failed_rank = 1;
  s.log_tail = "tail";
  s.training_status = "ok";
  s.events_lost = 2;
  s.events_late = 3;
  s.events_error = "No space left on device";
  s.device = "cpu";
  s.world_size = 2;
  s.epochs = 3;
  s.steps = 1407;
  s.optimizer_steps = 1407;
  s.samples = 90000;
  s.wall_s = 30.5;
  s.train_samples = 90000;
  s.train_s = 25.0;
  s.train_samples_per_s = 3600.0;
  s.eval_s = 4.0;
  s.checkpoint_s = 0.5;
  s.time_to_first_step_s = 1.25;
  s.first_step_unix = 1.7e9;
  s.run_wall_s = 32.0;
  s.launcher_wall_s = 31.0;
  wb::proto::RunCpu cpu;
  cpu.cores = 16;
  cpu.asked_cores = 8;
  cpu.used_cores = 7.5;
  cpu.other_load_cores = 0.9;
  cpu.contended = true;
  cpu.shared_cores = 1.0;
  cpu.shared = true;
  cpu.note = "other processes used 0.9 of 16 cores";
  cpu.busiest_others = std::vector<wb::ProcessLoad>{{812, "stress-ng", 0.8}, {90, "python3", 0.1}};
  cpu.threads = 4;
  cpu.min_threads = 3;
  cpu.process_cores = 7.5;
  cpu.machine_busy_cores = 8.4;
  cpu.other_cores = 0.9;
  s.cpu = cpu;
  s.best_val_acc = 0.88;
  s.final_val_acc = 0.87;
  s.best_val_loss = 0.33;
  s.peak_mem = int64_t{1} << 33;
  s.amp_skipped = 4;
  s.best_epoch = 2;
  s.best_value = 0.33;
  s.best_weights_restored = false;
  s.best_weights_note = "best.pt unreadable";
  s.target_val_acc = 0.8;
  s.samples_to_target = 38400;
  s.steps_to_target = 600;
  wb::proto::FlopsFigures flops;
  flops.per_step = 5.8e7;
  flops.per_sample = 9.1e5;
  flops.achieved_gflop_per_s = 1.9;
  flops.peak = wb::proto::PeakFigure{95.0, "fp32 matmul measured on this CPU (2 threads), 2026-12-01"};
  flops.compute_only_step_ms = 3.0;
  flops.step_ms = 3.5;
  s.flops = flops;
  return s;
}

json throughAFile(const json& j) { return json::parse(j.dump(2)); }

}  // namespace

class TestRunSummary : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void everyFieldRoundTripsUnderItsKey() {
    const RunSummary s = everyField();
    const json j = throughAFile(wb::proto::toJson(s));
    QCOMPARE(keysOf(j), kSummaryKeys);
    QCOMPARE(keysOf(j["cpu"]), kCpuKeys);
    QCOMPARE(j["failed_rank"].get<int>(), 1);
    QVERIFY(j["peak_mem"].is_number_integer());  // bytes stay integers on disk
    const RunSummary r = wb::proto::readRunSummary(j);
    QCOMPARE(wb::proto::toJson(r), wb::proto::toJson(s));
    QCOMPARE(*r.status, std::string("failed"));
    QCOMPARE(*r.steps, int64_t{1407});
    QCOMPARE(*r.peak_mem, int64_t{1} << 33);
    QCOMPARE(*r.train_samples_per_s, 3600.0);
    QCOMPARE(*r.cpu->asked_cores, 8);
    QCOMPARE(*r.cpu->contended, true);
    QCOMPARE(int(r.cpu->busiest_others->size()), 2);  // a list of records keeps each one's fields
    QCOMPARE((*r.cpu->busiest_others)[0].name, std::string("stress-ng"));
    QCOMPARE((*r.cpu->busiest_others)[1].pid, 90);
    QCOMPARE(j["cpu"]["busiest_others"][0]["cores"].get<double>(), 0.8);
    QCOMPARE(*r.best_weights_restored, false);
    QVERIFY(r.unknown.empty() && r.cpu->unknown.empty());  // every key was known
  }

  // A rank that failed before training knows two things; nothing else is written.
  void absentFieldsStayAbsent() {
    RunSummary s;
    s.status = "failed";
    s.error = "no such dataset";
    QCOMPARE(keysOf(wb::proto::toJson(s)), (std::set<std::string>{"status", "error"}));
    QCOMPARE(keysOf(wb::proto::toJson(RunSummary{})), std::set<std::string>{});
  }

  // A figure the writer knew to be unknown (no evaluation: no best accuracy) is null on disk
  // and absent when read.
  void aNonFiniteFigureIsNullAndReadsAsAbsent() {
    RunSummary s;
    s.best_val_acc = std::nan("");
    const json j = throughAFile(wb::proto::toJson(s));
    QVERIFY(j.contains("best_val_acc") && j["best_val_acc"].is_null());
    QVERIFY(!wb::proto::readRunSummary(j).best_val_acc);
    QVERIFY(!wb::proto::finite(s.best_val_acc));
    QCOMPARE(wb::proto::finite(std::optional<double>(2.0)), std::optional<double>(2.0));
  }

  // summary.json as a launcher of an earlier version wrote it: launcher_wall_s but no
  // run_wall_s, no train_* clocks, a cpu without the contended verdict, a field since dropped.
  void anOldFormatSummaryReads() {
    const char* old = R"({
      "status": "early-stopped",
      "run_id": "fmnist-20250101-120000",
      "name": "fmnist",
      "run_dir": "/home/u/runs/fmnist-20250101-120000",
      "epochs": 4,
      "steps": 1876,
      "samples": 120064,
      "wall_s": 41.2,
      "best_val_acc": 0.8812000155448914,
      "final_val_acc": 0.8790000081062317,
      "best_val_loss": null,
      "peak_mem": 412090368,
      "device": "cpu",
      "world_size": 1,
      "best_epoch": 2,
      "best_value": 0.33,
      "launcher_wall_s": 43.9,
      "samples_per_s": 2914.2,
      "cpu": {"cores": 2, "asked_cores": 2, "used_cores": 1.83, "other_load_cores": 0.05}
    })";
    const RunSummary r = wb::proto::readRunSummary(json::parse(old));
    QCOMPARE(*r.status, std::string("early-stopped"));
    QCOMPARE(*r.name, std::string("fmnist"));
    QCOMPARE(*r.epochs, 4);
    QCOMPARE(*r.steps, int64_t{1876});
    QCOMPARE(*r.wall_s, 41.2);
    QCOMPARE(*r.launcher_wall_s, 43.9);
    QVERIFY(!r.run_wall_s && !r.train_s && !r.train_samples_per_s && !r.eval_s && !r.time_to_first_step_s);
    QVERIFY(!r.best_val_loss);  // null: not known
    QCOMPARE(*r.peak_mem, int64_t{412090368});
    QCOMPARE(*r.best_epoch, 2);
    QVERIFY(r.cpu.has_value());
    QCOMPARE(r.cpu->cores, 2);
    QCOMPARE(*r.cpu->used_cores, 1.83);
    QVERIFY(!r.cpu->contended && !r.cpu->note);
    QCOMPARE(r.unknown, (json{{"samples_per_s", 2914.2}}));  // dropped since, kept all the same
  }

  // A newer writer's fields (at the top and inside cpu) survive a reader that renames the run.
  void unknownFieldsSurviveAReadModifyWrite() {
    const json newer = {{"status", "ok"},
                        {"name", "before"},
                        {"train_s", 10.0},
                        {"gpu_clock", {{"factor", 0.97}, {"changed", false}}},
                        {"repeat_group", "g1"},
                        {"cpu", {{"cores", 8}, {"steal_cores", 0.2}}}};
    RunSummary s = wb::proto::readRunSummary(throughAFile(newer));
    QCOMPARE(s.unknown, (json{{"gpu_clock", newer["gpu_clock"]}, {"repeat_group", "g1"}}));
    s.name = "after";
    const json written = throughAFile(wb::proto::toJson(s));
    json expected = newer;
    expected["name"] = "after";
    QCOMPARE(written, expected);
  }

  void aBadFieldKeepsTheDefault_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("not an object") << R"([1, 2])";
    QTest::newRow("a string") << R"("ok")";
    QTest::newRow("nulls") << R"({"status": null, "epochs": null, "cpu": null, "train_s": null, "best_weights_restored": null})";
    QTest::newRow("wrong types")
        << R"({"status": 1, "epochs": "four", "cpu": "busy", "train_s": "10", "best_weights_restored": 1, "peak_mem": [1]})";
    QTest::newRow("wrong inner types") << R"({"cpu": {"cores": "2", "contended": "yes", "used_cores": false}})";
  }
  void aBadFieldKeepsTheDefault() {
    QFETCH(QString, text);
    RunSummary r;
    try {
      r = wb::proto::readRunSummary(json::parse(text.toStdString()));
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    QVERIFY(!r.status && !r.epochs && !r.train_s && !r.best_weights_restored && !r.peak_mem);
    if (r.cpu) QVERIFY(r.cpu->cores == 0 && !r.cpu->contended && !r.cpu->used_cores);
  }
};

QTEST_APPLESS_MAIN(TestRunSummary)
#include "test_run_summary.moc"
