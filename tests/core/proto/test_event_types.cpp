// The typed events: what the trainer and the launcher write (writeFields, toEvent) is what
// core/records and the window read back (read*Event), through the JSON Lines encoding, under the
// keys events.h documents; readers tolerate what older or partial writers leave out or mistype,
// and a non-finite number (written as null) reads back as unknown (NaN).
#include <QtTest/QtTest>

#include <cmath>
#include <set>
#include <string>

#include "wb/proto/event_types.h"
#include "wb/proto/events.h"

using nlohmann::json;

namespace {

json throughTheWire(const json& ev) {
  auto back = wb::proto::decodeEvent(wb::proto::encodeEvent(ev));
  return back ? *back : json();
}

std::set<std::string> keysOf(const json& j) {
  std::set<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.insert(it.key());
  return keys;
}

const std::set<std::string> kEnvelope = {"v", "type", "rank", "t", "wall"};

std::set<std::string> withEnvelope(std::set<std::string> keys) {
  keys.insert(kEnvelope.begin(), kEnvelope.end());
  return keys;
}

wb::proto::StartEvent aStart() {
  wb::proto::StartEvent s;
  s.config = {{"name", "fmnist"}, {"train", {{"epochs", 2}}}};
  s.versions = {{"libtorch", "2.1.0"}, {"cuda", ""}};
  s.backend_check = {{"ok", true}, {"mkldnn_disabled", false}};
  s.host = {"box", "Test CPU", 16};
  s.device = "cuda:0";
  s.threads = 8;
  s.host_use = {"fits", "fixed by train.threads"};
  s.world_size = 2;
  s.local_rank = 1;
  s.model = {"lenet", 61706};
  s.dataset = {"fashion-mnist", 60000, 10000, 10, 1, 28};
  s.steps_per_epoch = 469;
  s.total_steps = 938;
  s.batch = {64, 128, "per rank"};
  s.lr_scaling = {{"mode", "linear"}, {"effective_lr", 0.02}};
  s.resumed_from = wb::proto::ResumedFrom{"/runs/a/checkpoints/last.pt", 2, 10, 479};
  s.speedups["workers"] = {true, true, "2 loader thread(s)"};
  s.speedups["pin_memory"] = {true, false, "not available: needs CUDA"};
  wb::proto::SpeedupStatus sharding{true, true, "ZeRO-2", int64_t{4096}, false};
  s.speedups["sharding"] = sharding;
  s.dist = {{"backend", "nccl"}, {"buckets", 3}};
  return s;
}

// The start event's keys as events.h documents them (and old run folders hold them): a key
// renamed in event_types.cpp breaks this list, so a rename is a decision, not an accident.
const std::set<std::string> kStartKeys = {"config", "versions", "backend_check", "host", "device", "threads",
                                          "host_use", "world_size", "local_rank", "model", "dataset",
                                          "steps_per_epoch", "total_steps", "batch", "lr_scaling", "resumed_from",
                                          "speedups", "dist"};

}  // namespace

class TestEventTypes : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void envelopeReadsWhatMakeEventWrites() {
    const json ev = throughTheWire(wb::proto::makeEvent("epoch", 2, 1.5));
    QCOMPARE(keysOf(ev), kEnvelope);
    const auto env = wb::proto::readEnvelope(ev);
    QCOMPARE(env.v, wb::proto::kEventVersion);
    QCOMPARE(env.type, std::string("epoch"));
    QCOMPARE(env.rank, std::optional<int>(2));
    QCOMPARE(env.t, 1.5);
    QVERIFY(env.wall > 1.6e9);
    // A rank's line before the launcher stamps it has no rank; a broken envelope keeps defaults.
    const auto bare = wb::proto::readEnvelope(json{{"type", "end"}, {"t", "late"}, {"wall", nullptr}});
    QVERIFY(!bare.rank);
    QCOMPARE(bare.t, 0.0);
    QVERIFY(std::isnan(bare.wall));
  }

  void stepPartsRoundTrip() {
    wb::proto::StepEvent s;
    s.mem = wb::proto::MemoryPart{"cuda:0", int64_t{10}, int64_t{20}, int64_t{30}, int64_t{40}, int64_t{50}, 0.5};
    s.cpu = wb::proto::CpuPart{0.9, 1.9, 1.0, 2, 2};
    wb::proto::CommPart comm;
    comm.comm_ms = 1.5;
    comm.overlap = 0.25;
    comm.bytes_reduced = 4096;
    comm.buckets = 3;
    s.comm = comm;
    s.amp = wb::proto::AmpPart{65536.0, int64_t{2}};
    const json ev = throughTheWire(wb::proto::toEvent(s, 0, 1));
    QCOMPARE(keysOf(ev["mem"]),
             (std::set<std::string>{"device", "alloc", "reserved", "peak", "rss", "rss_peak", "page_faults_per_step"}));
    QCOMPARE(keysOf(ev["cpu"]), (std::set<std::string>{"process_cores", "machine_busy_cores", "other_cores", "cores", "threads"}));
    QCOMPARE(keysOf(ev["comm"]), (std::set<std::string>{"comm_ms", "launch_ms", "wait_ms", "gather_ms", "overlap",
                                                        "bytes_reduced", "bytes_gathered", "buckets",
                                                        "buckets_in_backward", "optimizer_state_bytes"}));
    QCOMPARE(keysOf(ev["amp"]), (std::set<std::string>{"scale", "skipped"}));
    const auto r = wb::proto::readStepEvent(ev);
    QCOMPARE(r.mem->device, std::string("cuda:0"));
    QCOMPARE(r.mem->peak, std::optional<int64_t>(30));
    QCOMPARE(r.mem->page_faults_per_step, std::optional<double>(0.5));
    QCOMPARE(r.cpu->machine_busy_cores, 1.9);
    QCOMPARE(r.cpu->threads, std::optional<int>(2));
    QCOMPARE(r.comm->bytes_reduced, int64_t{4096});
    QCOMPARE(r.comm->overlap, 0.25);
    QCOMPARE(r.amp->scale, 65536.0);
    QCOMPARE(r.amp->skipped, std::optional<int64_t>(2));
    // The CPU's memory has no allocator figures; an older step no threads.
    const auto old = wb::proto::readStepEvent(json{{"mem", {{"device", "cpu"}, {"rss", 5.0e7}}},
                                                   {"cpu", {{"process_cores", 1}, {"machine_busy_cores", 1.5}}}});
    QVERIFY(!old.mem->alloc && !old.mem->peak);
    QCOMPARE(old.mem->rss, std::optional<int64_t>(50000000));
    QVERIFY(!old.cpu->threads && std::isnan(old.cpu->other_cores));
    QVERIFY(!old.comm && !old.amp);
  }

  void stepRoundTrips() {
    wb::proto::StepEvent s;
    s.epoch = 2;
    s.step = 150;
    s.samples = 9600;
    s.loss = 0.42;
    s.lr = 0.01;
    s.samples_per_s = 1234.5;
    s.step_ms = 51.8;
    s.ms = wb::proto::StepPhases{1, 2, 3, 4, 5, 6};
    s.mem = wb::proto::MemoryPart{};
    s.mem->device = "cpu";
    s.mem->peak = 1000;
    s.progress = 0.5;
    s.eta_s = 12;
    json ev = wb::proto::makeEvent("step", 0, 1.0);
    wb::proto::writeFields(s, ev);
    QVERIFY(!ev.contains("comm") && !ev.contains("amp"));  // absent parts stay absent
    const auto r = wb::proto::readStepEvent(throughTheWire(ev));
    QCOMPARE(r.epoch, 2);
    QCOMPARE(r.step, int64_t{150});
    QCOMPARE(r.samples, int64_t{9600});
    QCOMPARE(r.loss, 0.42);
    QCOMPARE(r.samples_per_s, 1234.5);
    QVERIFY(r.ms.has_value());
    QCOMPARE(r.ms->data, 1.0);
    QCOMPARE(r.ms->opt, 6.0);
    QCOMPARE(r.mem->peak, std::optional<int64_t>(1000));
    QVERIFY(!r.comm);
    QCOMPARE(r.eta_s, 12.0);
  }

  void aNonFiniteLossReadsBackAsUnknown() {
    wb::proto::StepEvent s;
    s.loss = std::nan("");
    json ev = wb::proto::makeEvent("step", 0, 1.0);
    wb::proto::writeFields(s, ev);
    const json wire = throughTheWire(ev);
    QVERIFY(wire["loss"].is_null());
    QVERIFY(std::isnan(wb::proto::readStepEvent(wire).loss));
  }

  void missingFieldsKeepTheDefaults() {
    const auto step = wb::proto::readStepEvent(json{{"type", "step"}, {"epoch", "one"}});
    QCOMPARE(step.epoch, 0);  // another type: the default
    QVERIFY(!step.ms.has_value());
    QVERIFY(std::isnan(step.lr));
    const auto eval = wb::proto::readEvalEvent(json{{"type", "eval"}, {"val_acc", 0.9}});
    QCOMPARE(eval.val_acc, 0.9);
    QVERIFY(std::isnan(eval.val_loss));
    const auto epoch = wb::proto::readEpochEvent(json{{"type", "epoch"}, {"samples_per_s", 10.0}});
    QCOMPARE(epoch.samples_per_s, 10.0);
    QCOMPARE(epoch.train_samples_per_s, 0.0);  // an older writer's epoch
    QVERIFY(epoch.complete);
  }

  void evalAndEpochRoundTrip() {
    wb::proto::EvalEvent e;
    e.epoch = 3;
    e.val_loss = 0.3;
    e.val_acc = 0.88;
    e.eval_samples = 1000;
    e.inference_mode = true;
    json ev = wb::proto::makeEvent("eval", 0, 2.0);
    wb::proto::writeFields(e, ev);
    const auto r = wb::proto::readEvalEvent(throughTheWire(ev));
    QCOMPARE(r.epoch, 3);
    QCOMPARE(r.val_acc, 0.88);
    QCOMPARE(r.eval_samples, int64_t{1000});
    QVERIFY(r.inference_mode);

    wb::proto::EpochEvent p;
    p.epoch = 3;
    p.train_seconds = 2.5;
    p.samples = 5000;
    p.train_samples_per_s = 2000;
    p.samples_per_s = 2000;
    p.complete = false;
    json ep = wb::proto::makeEvent("epoch", 0, 3.0);
    wb::proto::writeFields(p, ep);
    const auto q = wb::proto::readEpochEvent(throughTheWire(ep));
    QCOMPARE(q.train_samples_per_s, 2000.0);
    QCOMPARE(q.samples, int64_t{5000});
    QVERIFY(!q.complete);
  }
  void startRoundTripsUnderItsDocumentedKeys() {
    const json ev = wb::proto::toEvent(aStart(), 0, 0.5);
    QCOMPARE(keysOf(ev), withEnvelope(kStartKeys));
    QCOMPARE(keysOf(ev["host"]), (std::set<std::string>{"name", "cpu", "cores"}));
    QCOMPARE(keysOf(ev["dataset"]), (std::set<std::string>{"name", "train", "val", "classes", "channels", "image_size"}));
    QCOMPARE(keysOf(ev["resumed_from"]), (std::set<std::string>{"path", "epoch", "batch_in_epoch", "step"}));
    QCOMPARE(keysOf(ev["speedups"]["workers"]), (std::set<std::string>{"requested", "active", "note"}));
    QCOMPARE(keysOf(ev["speedups"]["sharding"]),
             (std::set<std::string>{"requested", "active", "note", "optimizer_state_bytes", "gradient_memory_saved"}));
    QCOMPARE(ev["type"].get<std::string>(), std::string("start"));
    QVERIFY(wb::proto::isEvent<wb::proto::StartEvent>(ev));
    QVERIFY(!wb::proto::isEvent<wb::proto::EndEvent>(ev));

    const auto r = wb::proto::readStartEvent(throughTheWire(ev));
    const auto s = aStart();
    QCOMPARE(r.config, s.config);
    QCOMPARE(r.versions, s.versions);
    QCOMPARE(r.host.name, std::string("box"));
    QCOMPARE(r.host.cores, 16);
    QCOMPARE(r.device, std::string("cuda:0"));
    QCOMPARE(r.threads, 8);
    QCOMPARE(r.host_use.threads, s.host_use.threads);
    QCOMPARE(r.world_size, 2);
    QCOMPARE(r.local_rank, 1);
    QCOMPARE(r.model.parameters, int64_t{61706});
    QCOMPARE(r.dataset.val, int64_t{10000});
    QCOMPARE(r.dataset.image_size, 28);
    QCOMPARE(r.steps_per_epoch, int64_t{469});
    QCOMPARE(r.total_steps, int64_t{938});
    QCOMPARE(r.batch.global, int64_t{128});
    QCOMPARE(r.lr_scaling, s.lr_scaling);
    QVERIFY(r.resumed_from.has_value());
    QCOMPARE(r.resumed_from->step, int64_t{479});
    QCOMPARE(r.resumed_from->epoch, 2);
    QCOMPARE(r.speedups.size(), size_t{3});
    QVERIFY(r.speedups.at("workers").active);
    QVERIFY(r.speedups.at("pin_memory").requested && !r.speedups.at("pin_memory").active);
    QCOMPARE(r.speedups.at("pin_memory").note, std::string("not available: needs CUDA"));
    QCOMPARE(r.speedups.at("sharding").optimizer_state_bytes.value_or(0), int64_t{4096});
    QCOMPARE(r.speedups.at("sharding").gradient_memory_saved, std::optional<bool>(false));
    QVERIFY(!r.speedups.at("workers").optimizer_state_bytes);
    QCOMPARE(r.dist, s.dist);
  }

  // A new run and one process: no resumed_from, no dist, no per-rank sharding figures.
  void absentPartsOfStartStayAbsent() {
    wb::proto::StartEvent s;
    s.speedups["sharding"] = {false, false, "off"};
    const json ev = wb::proto::toEvent(s, 0, 0);
    for (const char* key : {"resumed_from", "dist", "config", "versions", "backend_check", "lr_scaling"})
      QVERIFY2(!ev.contains(key), key);
    QVERIFY(!ev["speedups"]["sharding"].contains("optimizer_state_bytes"));
    const auto r = wb::proto::readStartEvent(ev);
    QVERIFY(!r.resumed_from);
    QVERIFY(r.dist.is_null());
  }

  void startTolerance_data() {
    QTest::addColumn<QString>("line");
    QTest::newRow("empty") << R"({"type":"start"})";
    QTest::newRow("nulls") << R"({"type":"start","host":null,"threads":null,"world_size":null,"speedups":null,"resumed_from":null,"model":null})";
    QTest::newRow("wrong types") << R"({"type":"start","host":"box","threads":"8","world_size":[2],"device":3,"speedups":[1],"steps_per_epoch":"many","resumed_from":"yes","config":"x"})";
    QTest::newRow("wrong inner types") << R"({"type":"start","host":{"cores":"16","name":7},"speedups":{"workers":{"requested":2,"active":null,"note":3},"pin_memory":"on"},"dataset":{"train":"all"}})";
  }
  void startTolerance() {
    QFETCH(QString, line);
    const auto ev = wb::proto::decodeEvent(line.toStdString());
    QVERIFY(ev.has_value());
    wb::proto::StartEvent r;
    try {
      r = wb::proto::readStartEvent(*ev);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    const wb::proto::StartEvent d;
    QCOMPARE(r.host.cores, d.host.cores);
    QCOMPARE(r.host.name, d.host.name);
    QCOMPARE(r.threads, d.threads);
    QCOMPARE(r.world_size, 0);  // not given
    QCOMPARE(r.device, d.device);
    QCOMPARE(r.steps_per_epoch, d.steps_per_epoch);
    QCOMPARE(r.dataset.train, d.dataset.train);
    QVERIFY(!r.resumed_from);
    QVERIFY(r.config.is_null());
    // A speedup that is not an object is left out; a mistyped field keeps its default.
    QVERIFY(!r.speedups.count("pin_memory"));
    if (r.speedups.count("workers")) {
      const auto& w = r.speedups.at("workers");
      QVERIFY(!w.requested && !w.active && w.note.empty());
    }
  }

  void endRoundTripsAndANamelessEndIsFailed() {
    wb::proto::EndEvent e;
    e.status = wb::proto::kStatusEarlyStopped;
    e.summary.wall_s = 12.5;
    e.summary.train_samples_per_s = 900.0;
    const json ev = wb::proto::toEvent(e, -1, 13.0);
    QCOMPARE(keysOf(ev), withEnvelope({"status", "summary"}));
    QCOMPARE(keysOf(ev["summary"]), (std::set<std::string>{"wall_s", "train_samples_per_s"}));
    const auto r = wb::proto::readEndEvent(throughTheWire(ev));
    QCOMPARE(r.status, std::string("early-stopped"));
    QCOMPARE(wb::proto::toJson(r.summary), wb::proto::toJson(e.summary));
    QCOMPARE(wb::proto::readEndEvent(json{{"type", "end"}}).status, std::string(wb::proto::kStatusFailed));
    QCOMPARE(wb::proto::readEndEvent(json{{"type", "end"}, {"status", 0}, {"summary", "ok"}}).status,
             std::string(wb::proto::kStatusFailed));
    QVERIFY(wb::proto::toJson(wb::proto::readEndEvent(json{{"type", "end"}, {"summary", "ok"}}).summary).empty());
  }

  void runEventRoundTrips() {
    wb::proto::RunEvent e;
    e.run_dir = "/runs/a";
    e.run_id = "a";
    e.name = "fmnist";
    e.world_size = 2;
    e.config = {{"name", "fmnist"}};
    e.resume = "/runs/a/checkpoints/last.pt";
    e.config_changes = json::array({"train.epochs: 2 -> 4"});
    const json ev = wb::proto::toEvent(e, -1, 0);
    QCOMPARE(keysOf(ev), withEnvelope({"run_dir", "run_id", "name", "world_size", "config", "resume", "config_changes"}));
    const auto r = wb::proto::readRunEvent(throughTheWire(ev));
    QCOMPARE(r.run_dir, e.run_dir);
    QCOMPARE(r.run_id, e.run_id);
    QCOMPARE(r.world_size, 2);
    QCOMPARE(r.resume, e.resume);
    QCOMPARE(r.config_changes, e.config_changes);
    // A new run: no resume, no changes.
    const json fresh = wb::proto::toEvent(wb::proto::RunEvent{}, -1, 0);
    QVERIFY(!fresh.contains("resume") && !fresh.contains("config_changes"));
    QVERIFY(!wb::proto::readRunEvent(json{{"resume", 3}, {"world_size", "2"}}).resume);
  }

  void smallEventsRoundTrip() {
    const json w = wb::proto::toEvent(wb::proto::WarningEvent{"corrupt image", std::string("/d/x.png")}, 0, 1);
    QCOMPARE(keysOf(w), withEnvelope({"message", "path"}));
    QCOMPARE(wb::proto::readWarningEvent(w).path, std::optional<std::string>("/d/x.png"));
    QVERIFY(!wb::proto::toEvent(wb::proto::WarningEvent{"no path", std::nullopt}, 0, 1).contains("path"));

    const json e = wb::proto::toEvent(wb::proto::ErrorEvent{"rank 1 died", "rank_failed", std::string("tail")}, 1, 2);
    QCOMPARE(keysOf(e), withEnvelope({"message", "code", "log_tail"}));
    const auto er = wb::proto::readErrorEvent(throughTheWire(e));
    QCOMPARE(er.code, std::string("rank_failed"));
    QCOMPARE(er.log_tail, std::optional<std::string>("tail"));
    QVERIFY(!wb::proto::readErrorEvent(json{{"message", nullptr}, {"log_tail", 5}}).log_tail);

    wb::proto::EarlyStopEvent es{"no improvement for 2 epochs", 3, 0.31, "val_loss", 5};
    const json esj = wb::proto::toEvent(es, 0, 3);
    QCOMPARE(keysOf(esj), withEnvelope({"reason", "best_epoch", "best_value", "monitor", "epochs_saved"}));
    const auto esr = wb::proto::readEarlyStopEvent(throughTheWire(esj));
    QCOMPARE(esr.best_epoch, 3);
    QCOMPARE(esr.best_value, 0.31);
    QCOMPARE(esr.epochs_saved, 5);
    const auto esNull = wb::proto::readEarlyStopEvent(json{{"best_epoch", nullptr}, {"best_value", nullptr}});
    QCOMPARE(esNull.best_epoch, 0);
    QVERIFY(std::isnan(esNull.best_value));

    wb::proto::CheckpointEvent c{"best", "/r/checkpoints/best.pt", 2, 0, 938};
    const json cj = wb::proto::toEvent(c, 0, 4);
    QCOMPARE(keysOf(cj), withEnvelope({"kind", "path", "epoch", "batch_in_epoch", "step"}));
    const auto cr = wb::proto::readCheckpointEvent(throughTheWire(cj));
    QCOMPARE(cr.kind, std::string("best"));
    QCOMPARE(cr.epoch, 2);
    QCOMPARE(cr.step, int64_t{938});
    QCOMPARE(wb::proto::readCheckpointEvent(json{{"epoch", "2"}, {"kind", false}}).epoch, 0);
  }

  // The step, eval and epoch events keep the keys they had before they were types.
  void figureEventsKeepTheirKeys() {
    wb::proto::StepEvent s;
    s.ms = wb::proto::StepPhases{};
    QCOMPARE(keysOf(wb::proto::toEvent(s, 0, 1)),
             withEnvelope({"epoch", "step", "samples", "loss", "lr", "samples_per_s", "step_ms", "ms", "progress", "eta_s"}));
    QCOMPARE(keysOf(wb::proto::toEvent(s, 0, 1)["ms"]), (std::set<std::string>{"data", "h2d", "fwd", "bwd", "comm", "opt"}));
    QCOMPARE(keysOf(wb::proto::toEvent(wb::proto::EvalEvent{}, 0, 1)),
             withEnvelope({"epoch", "step", "samples", "val_loss", "val_acc", "eval_ms", "eval_samples", "inference_mode"}));
    QCOMPARE(keysOf(wb::proto::toEvent(wb::proto::EpochEvent{}, 0, 1)),
             withEnvelope({"epoch", "seconds", "train_seconds", "samples", "train_samples_per_s", "samples_per_s",
                           "train_loss", "complete"}));
  }
  void ladderStreamRoundTrips() {
    const json l = wb::proto::toEvent(wb::proto::LadderEvent{"/out", 2, json::array({{{"key", "baseline"}}})}, -1, 0);
    QCOMPARE(keysOf(l), withEnvelope({"out_dir", "repeats", "steps"}));
    QCOMPARE(wb::proto::readLadderEvent(throughTheWire(l)).steps.size(), size_t{1});

    const json rs = wb::proto::toEvent(wb::proto::RungStartEvent{1, 8, "workers", "loader workers 0 -> 2", 1, "/out/r"}, -1, 1);
    QCOMPARE(keysOf(rs), withEnvelope({"index", "steps", "key", "added", "round", "run_dir"}));
    const auto rsr = wb::proto::readRungStartEvent(throughTheWire(rs));
    QCOMPARE(rsr.steps, int64_t{8});
    QCOMPARE(rsr.added, std::string("loader workers 0 -> 2"));

    wb::proto::RungEndEvent re;
    re.index = 1;
    re.key = "workers";
    re.status = "ok";
    re.wall_s = 12.5;
    re.best_val_acc = wb::proto::kUnknown;  // not known: null on the wire, absent when read
    re.contended = false;
    const json rej = throughTheWire(wb::proto::toEvent(re, -1, 2));
    QCOMPARE(keysOf(rej), withEnvelope({"index", "key", "round", "run_dir", "status", "wall_s", "best_val_acc", "contended"}));
    QVERIFY(rej["best_val_acc"].is_null());
    const auto rer = wb::proto::readRungEndEvent(rej);
    QCOMPARE(rer.wall_s, std::optional<double>(12.5));
    QVERIFY(!rer.best_val_acc);
    QCOMPARE(rer.contended, std::optional<bool>(false));
    QVERIFY(!rer.error);
    // A rung that never started: no figures at all.
    wb::proto::RungEndEvent none;
    none.status = "not-started";
    none.error = "could not start";
    QVERIFY(!wb::proto::toEvent(none, -1, 0).contains("wall_s"));

    const json end = wb::proto::toEvent(wb::proto::LadderEndEvent{"ok", "/out", {{"steps", json::array()}}}, -1, 3);
    QCOMPARE(keysOf(end), withEnvelope({"status", "out_dir", "ladder", "answer"}));
    QCOMPARE(wb::proto::readLadderEndEvent(throughTheWire(end)).out_dir, std::string("/out"));
    QCOMPARE(wb::proto::readLadderEndEvent(json{{"type", "end"}}).status, std::string(wb::proto::kStatusFailed));
  }
};

QTEST_APPLESS_MAIN(TestEventTypes)
#include "test_event_types.moc"
