#pragma once
// A run as the report layer sees it: what one run directory (or a live event stream) says about
// the run, decoded once into plain values. Rank 0's events give the curves; every rank's step
// events give per-rank memory. Qt-free, LibTorch-free; safe to use from any thread (no shared
// state), a RunRecord is a value.
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"
#include "wb/common/sysinfo.h"  // kContendedOtherCores
#include "wb/proto/event_types.h"
#include "wb/proto/run_summary.h"

namespace wb::records {

// Per-step averages of one log interval, in milliseconds (the `ms` object of a step event).
struct StepTimes {
  double data = 0, h2d = 0, fwd = 0, bwd = 0, opt = 0, comm = 0;
  double other = 0;  // the part of the step no phase covers (a writer that times only some phases)
  double total() const { return data + h2d + fwd + bwd + opt + comm + other; }
};

// CPU use over one log interval (a step event's `cpu`), in cores; NaN (cores: 0) when absent.
struct StepCpu {
  double process_cores = std::numeric_limits<double>::quiet_NaN();
  double machine_busy_cores = std::numeric_limits<double>::quiet_NaN();
  int cores = 0;
};

// A step event's `mem`, in bytes; NaN where the writer gave none (alloc/reserved: CUDA only).
struct StepMemory {
  std::string device;        // "cpu" | "cuda:0"
  double alloc = std::numeric_limits<double>::quiet_NaN();
  double reserved = std::numeric_limits<double>::quiet_NaN();
  double peak = std::numeric_limits<double>::quiet_NaN();
  double rss = std::numeric_limits<double>::quiet_NaN();
};

struct StepSample {          // one rank-0 `step` event
  int epoch = 0;
  int64_t step = 0;
  int64_t samples = 0;       // seen so far, all ranks together
  double t = 0;              // seconds since rank 0 started
  double loss = 0;           // NaN when the event had none (non-finite losses are written as null)
  double lr = 0;
  double samples_per_s = 0;  // over the interval (0 when absent)
  std::optional<StepTimes> ms;
  std::optional<double> amp_scale;
  std::optional<int64_t> amp_skipped;  // cumulative skipped fp16 steps so far
  std::optional<StepCpu> cpu;
  std::optional<StepMemory> mem;
  std::optional<double> gflop_per_s;       // the interval's achieved GFLOP/s (the event's flops)
  std::optional<double> pct_of_peak;       // ... as % of the measured peak
  std::optional<double> pct_of_datasheet;  // ... as % of the datasheet peak (GPU)
};

struct EvalSample {          // one rank-0 `eval` event
  int epoch = 0;
  int64_t step = 0;
  double t = 0;
  double val_loss = 0;       // NaN when absent
  double val_acc = 0;        // 0..1
  double eval_ms = 0;        // 0 when absent
  int64_t eval_samples = 0;  // validation images it scored (0 when absent)
  int64_t samples = 0;       // training samples seen before it (global; 0 when absent)
};

struct EpochSample {         // one rank-0 `epoch` event
  int epoch = 0;
  double t = 0;
  double seconds = 0;
  double samples_per_s = 0;        // older writers: samples / (epoch seconds − evaluation)
  double train_samples_per_s = 0;  // samples / seconds in training steps (0 when absent)
  double train_loss = 0;
};

// The machine's CPU over the whole run (summary.cpu), in cores.
struct CpuUse {
  int cores = 0;                             // logical cores of the machine
  std::optional<double> asked_cores;         // intra-op threads summed over ranks
  std::optional<double> used_cores;          // the ranks' CPU seconds / wall
  std::optional<double> other_load_cores;    // busy cores not the run's own, averaged over the run
  bool contended = false;                    // the writer's verdict (other load ≥ kContendedOtherCores)
  std::optional<double> shared_cores;        // its own experiment's other runs beside it (not other load)
  bool shared = false;                       // the writer's verdict (shared_cores ≥ kContendedOtherCores)
  std::string note;                          // the writer's words, when contended or shared
  std::vector<ProcessLoad> busiest_others;   // who took most of the other load, busiest first
};

// A step event's `cpu` object; nullopt when absent or without both busy and process cores.
std::optional<StepCpu> decodeStepCpu(const nlohmann::json& stepEvent);

// Decodes one step event (any rank); never throws (missing or mistyped fields read as absent).
StepSample decodeStep(const nlohmann::json& stepEvent);

// summary.cpu as the report reads it (nullopt when the run has none); a writer that left the
// verdict out is judged by the load it gave (wb::isContended).
std::optional<CpuUse> cpuUse(const proto::RunSummary& summary);

struct RunRecord {
  std::string dir;           // absolute run folder ("" for a record built from events alone)
  std::string id;            // folder name, or the run event's run_id
  std::string name;          // config name
  nlohmann::json config = nlohmann::json::object();   // config.json, else the run/start event's
  proto::StartEvent start;                            // rank 0's start event
  nlohmann::json env = nlohmann::json::object();      // env.json
  proto::RunSummary summary;       // summary.json, else the end event's summary
  std::string status = "running";  // ok | failed | cancelled | early-stopped | diverged | running
  bool finished = false;           // an end event or summary.json was seen
  int world_size = 1;
  std::string device = "cpu";      // rank 0's device ("cpu" | "cuda:0")
  std::vector<StepSample> steps;
  std::vector<EvalSample> evals;
  std::vector<EpochSample> epochs;
  std::optional<proto::EarlyStopEvent> early_stop;  // the early_stop event
  std::vector<std::string> warnings;          // warning messages (all ranks)
  std::vector<std::string> errors;            // error messages (all ranks)
  std::map<int, int64_t> device_peak;         // per rank, max mem.peak seen (bytes)
  std::map<int, int64_t> rss_peak;            // per rank, max mem.rss_peak (or rss) seen
  double last_t = 0;                          // rank 0's latest event time
  int64_t malformed_lines = 0;                // skipped lines of events.jsonl
  std::vector<std::string> problems;          // what could not be read (missing/corrupt files), and
                                              // what a newer writer wrote that this reader skipped

  bool onCuda() const { return device.rfind("cuda", 0) == 0; }
  // A config value by dotted path ("speedups.workers"); null json when absent.
  const nlohmann::json& configAt(const std::string& dotted) const;
  // Logical cores of the machine the run used (start.host.cores, env.json), 0 when unknown.
  int cores() const;
};

// Decodes events (any order of ranks, unknown types ignored). `dir`/`id` are left empty.
RunRecord recordFromEvents(const std::vector<nlohmann::json>& events);

// The same, one event at a time, for a record that follows a live stream (the window's runs):
// addEvent() as each event arrives; finishRecord() before the record is read (it puts the
// curves in time order, which arrival order already is unless ranks interleave, and takes the
// name from the config). recordFromEvents(events) == addEvent each, then finishRecord.
void addEvent(RunRecord& record, const nlohmann::json& event);
void finishRecord(RunRecord& record);

// Loads a run folder: config.json, events.jsonl (wb::proto::readEventsFile), summary.json and
// env.json when present. A run still in progress (no end, no summary) or cut short (truncated
// last line) loads with status "running"; a missing or corrupt optional file is noted in
// `problems`, and so is what the reader skipped (event types, fields it does not know, records of
// a newer schema version: a newer writer's, read with the fields this reader knows). Errors (Io) only when the folder does not exist or holds neither config.json nor
// events.jsonl.
Result<RunRecord> loadRun(const std::filesystem::path& dir);

// Loads several run folders; the first failure is the error (it names the folder).
Result<std::vector<RunRecord>> loadRuns(const std::vector<std::string>& dirs);

// A short label for tables: the run id (folder name), else the config name.
std::string runLabel(const RunRecord& run);

}  // namespace wb::records
