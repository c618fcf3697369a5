#pragma once
// The event schema as types: one struct per event type (the fields after the envelope that
// makeEvent writes: v, type, rank, t, wall). A writer fills a struct and turns it into an event
// with toEvent (or writeFields into an event of its own); a reader decodes the same struct with
// read<Type>Event, so writers (the trainer, the launcher) and readers (the launcher, core/records,
// the window) spell each field once: here and in event_types.cpp's field lists.
// Decoding is tolerant, as numberOr & co: a missing field, null (a non-finite number) or a value
// of another type keeps the member's default; it never throws. Parts that are free-form objects
// of their own (config, versions, backend_check, dist, ...) stay JSON.
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "wb/proto/events.h"
#include "wb/proto/run_summary.h"
#include "wb/proto/flops_record.h"

namespace wb::proto {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// ---- the envelope ------------------------------------------------------------------------

// What every event has (makeEvent writes it): the schema version, the type, the rank that wrote
// it (-1: the launcher) and its clocks.
struct Envelope {
  int v = 0;
  std::string type;
  std::optional<int> rank;         // absent: a rank's line the launcher has not stamped yet
  double t = 0;                    // seconds since the writer started
  double wall = kUnknown;          // unix seconds
};

// ---- the run's figures -------------------------------------------------------------------

// A step's (and an evaluation's) mem, in bytes. On the CPU alloc and reserved are the rss, and
// peak the rss peak; on CUDA they are the caching allocator's.
struct MemoryPart {
  std::string device;              // "cpu" | "cuda:0"
  std::optional<int64_t> alloc, reserved, peak;
  std::optional<int64_t> rss, rss_peak;
  std::optional<double> page_faults_per_step;  // minor faults per step over the interval
};

// A step's cpu: cores' worth of CPU over the log interval.
struct CpuPart {
  double process_cores = kUnknown;       // this rank's process
  double machine_busy_cores = kUnknown;  // the whole machine
  double other_cores = kUnknown;         // the difference: everything else
  int cores = 0;                         // logical cores; 0: unknown
  std::optional<int> threads;            // the rank's intra-op threads
};

// A step's comm (several ranks): the gradient exchange of the last step.
struct CommPart {
  double comm_ms = 0, launch_ms = 0, wait_ms = 0, gather_ms = 0;
  double overlap = 0;              // 0..1: the share of communication hidden behind backward
  int64_t bytes_reduced = 0, bytes_gathered = 0;
  int buckets = 0, buckets_in_backward = 0;
  int64_t optimizer_state_bytes = 0;  // this rank's
};

// A step's amp (fp16 loss scaling).
struct AmpPart {
  double scale = kUnknown;
  std::optional<int64_t> skipped;  // steps skipped so far
};


// A step event's ms: mean milliseconds per step of each phase over the log interval. The phases
// add up to the step: `other` is the part of it no phase covers, written by writers that time
// only some phases (the Python recorder times the loader's wait; the rest of a user's step is
// other); the core's trainer times every phase and leaves it out.
struct StepPhases {
  double data = 0, h2d = 0, fwd = 0, bwd = 0, comm = 0, opt = 0;
  std::optional<double> other;
};

struct StepEvent {                 // every log interval
  static constexpr const char* kType = "step";
  int epoch = 0;                   // 1-based
  int64_t step = 0;                // training steps so far (all lives of the run)
  int64_t samples = 0;             // global samples so far
  double loss = kUnknown;          // mean over the interval and every rank
  double lr = kUnknown;
  double samples_per_s = 0;        // training steps only, over the interval
  double step_ms = 0;              // mean step time over the interval
  std::optional<StepPhases> ms;
  std::optional<MemoryPart> mem;
  std::optional<CpuPart> cpu;
  std::optional<CommPart> comm;    // several ranks
  std::optional<AmpPart> amp;      // fp16
  std::optional<FlopsFigures> flops;  // FLOPs per step, achieved GFLOP/s against the peaks (flops.h)
  double progress = 0;             // 0..1 of the planned steps
  double eta_s = 0;
};

struct EvalEvent {                 // after each epoch
  static constexpr const char* kType = "eval";
  int epoch = 0;
  int64_t step = 0;
  int64_t samples = 0;
  double val_loss = kUnknown;
  double val_acc = kUnknown;       // 0..1
  double eval_ms = 0;
  int64_t eval_samples = 0;
  bool inference_mode = false;
  std::optional<MemoryPart> mem;
};

struct EpochEvent {                // after each evaluation
  static constexpr const char* kType = "epoch";
  int epoch = 0;
  double seconds = 0;              // the epoch's wall time, evaluation included
  double train_seconds = 0;        // its training steps only
  int64_t samples = 0;
  double train_samples_per_s = 0;  // samples / train_seconds
  double samples_per_s = 0;        // older readers' name for train_samples_per_s (older writers:
                                   // samples / (epoch seconds - evaluation))
  double train_loss = kUnknown;
  bool complete = true;            // false: stopped inside the epoch (max_steps)
};

// ---- the run's life ----------------------------------------------------------------------

// One speedup in the start event: asked for, in effect, and how (or why not).
struct SpeedupStatus {
  bool requested = false;
  bool active = false;
  std::string note;
  std::optional<int64_t> optimizer_state_bytes;  // sharding over several ranks: this rank's
  std::optional<bool> gradient_memory_saved;     // sharding over several ranks
};

struct HostInfo {                  // start.host, env.json's host
  std::string name;
  std::string cpu;                 // the CPU model
  int cores = 0;                   // logical cores; 0: unknown
};

struct HostUse {                   // start.host_use: how the rank sized itself, in words
  std::string memory;
  std::string threads;
};

struct ModelInfo {
  std::string name;
  int64_t parameters = 0;
};

struct DatasetInfo {
  std::string name;
  int64_t train = 0, val = 0;      // samples in each split
  int classes = 0, channels = 0, image_size = 0;
};

struct BatchInfo {
  int64_t per_rank = 0, global = 0;
  std::string note;
};

struct ResumedFrom {               // start.resumed_from: where a resumed run continues
  std::string path;                // the checkpoint
  int epoch = 0;                   // 1-based, the epoch it continues in
  int64_t batch_in_epoch = 0;
  int64_t step = 0;
};

struct StartEvent {                // each rank, once training is set up
  static constexpr const char* kType = "start";
  nlohmann::json config;           // the resolved config (wb/proto/config_json.h)
  nlohmann::json versions;         // {libtorch, cuda, cudnn, nccl, opencv, ...}
  nlohmann::json backend_check;    // {ok, mkldnn_disabled, detail, versions}
  HostInfo host;
  std::string device;              // "cpu" | "cuda:0"
  int threads = 0;                 // intra-op threads
  HostUse host_use;
  int world_size = 0;              // 0: not given
  int local_rank = 0;
  ModelInfo model;
  DatasetInfo dataset;
  int64_t steps_per_epoch = 0;
  int64_t total_steps = 0;
  BatchInfo batch;
  nlohmann::json lr_scaling;       // the effective lr and why (wb/common/lr_scaling.h)
  std::optional<ResumedFrom> resumed_from;
  std::map<std::string, SpeedupStatus> speedups;  // by speedup key (speedupTable())
  nlohmann::json dist;             // several ranks: {backend, world_size, buckets, sharding, ...}
};

struct RunEvent {                  // the launcher's first line (rank -1)
  static constexpr const char* kType = "run";
  std::string run_dir;
  std::string run_id;
  std::string name;
  int world_size = 0;              // 0: not given
  nlohmann::json config;           // config.json
  std::optional<std::string> resume;     // the checkpoint a resumed run continues from
  nlohmann::json config_changes;   // a resume's --set: ["field: before -> after", ...]
  std::optional<std::string> fine_tuned_from;  // run --fine-tune: the data.dataset the weights were trained on
};

struct WarningEvent {
  static constexpr const char* kType = "warning";
  std::string message;
  std::optional<std::string> path;  // the file it is about
};

struct ErrorEvent {                // the event's rank: the rank that failed (-1: the launcher)
  static constexpr const char* kType = "error";
  std::string message;
  std::string code;                // errcName, or the launcher's rank_failed | events_lost
  std::optional<std::string> log_tail;  // the failed rank's last log lines
};

struct EarlyStopEvent {
  static constexpr const char* kType = "early_stop";
  std::string reason;
  int best_epoch = 0;              // 0: none
  double best_value = kUnknown;
  std::string monitor;             // val_loss | val_acc
  int epochs_saved = 0;            // planned epochs not run
};

struct CheckpointEvent {
  static constexpr const char* kType = "checkpoint";
  std::string kind;                // last | best
  std::string path;
  int epoch = 0;                   // epochs completed when batch_in_epoch is 0
  int64_t batch_in_epoch = 0;
  int64_t step = 0;
};

struct EndEvent {                  // a rank's, and the launcher's single end of the run
  static constexpr const char* kType = "end";
  std::string status = kStatusFailed;  // ok | failed | cancelled | early-stopped | diverged;
                                       // an end that names none is a failed run
  RunSummary summary;              // summary.json's record (wb/proto/run_summary.h)
};

// ---- the ladder's stream (workbench-cli ladder --events-stdout; every event rank -1) -------

struct LadderEvent {               // first: where it writes and what it will run
  static constexpr const char* kType = "ladder";
  std::string out_dir;
  int repeats = 0;
  nlohmann::json steps;            // the plan: [{key, added, config_changes, ...}]
};

struct RungStartEvent {            // one run of one step begins
  static constexpr const char* kType = "rung_start";
  int64_t index = 0;               // the step, 0-based
  int64_t steps = 0;               // steps in the plan
  std::string key;                 // baseline | a speedup key | ...
  std::string added;               // what the step changes, in words
  int round = 0;                   // 1-based
  std::string run_dir;
};

struct RungEndEvent {              // that run ended (or could not start)
  static constexpr const char* kType = "rung_end";
  int64_t index = 0;
  std::string key;
  int round = 0;
  std::string run_dir;
  std::string status;              // a run's status, or not-started
  std::optional<std::string> error;
  std::optional<double> wall_s;        // these three once the run started (null: not known)
  std::optional<double> best_val_acc;
  std::optional<bool> contended;
};

struct LadderEndEvent {            // the ladder's single end
  static constexpr const char* kType = "end";
  std::string status = kStatusFailed;
  std::string out_dir;
  nlohmann::json ladder;           // ladder.json's content
  std::string answer;              // ladder.json's answer: the sentence every surface prints
};

// Adds the struct's fields to `event` (from makeEvent); absent optional parts are left out.
void writeFields(const StepEvent& e, nlohmann::json& event);
void writeFields(const EvalEvent& e, nlohmann::json& event);
void writeFields(const EpochEvent& e, nlohmann::json& event);
void writeFields(const StartEvent& e, nlohmann::json& event);
void writeFields(const RunEvent& e, nlohmann::json& event);
void writeFields(const WarningEvent& e, nlohmann::json& event);
void writeFields(const ErrorEvent& e, nlohmann::json& event);
void writeFields(const EarlyStopEvent& e, nlohmann::json& event);
void writeFields(const CheckpointEvent& e, nlohmann::json& event);
void writeFields(const EndEvent& e, nlohmann::json& event);
void writeFields(const LadderEvent& e, nlohmann::json& event);
void writeFields(const RungStartEvent& e, nlohmann::json& event);
void writeFields(const RungEndEvent& e, nlohmann::json& event);
void writeFields(const LadderEndEvent& e, nlohmann::json& event);
void writeFields(const HostInfo& h, nlohmann::json& object);
void writeFields(const SpeedupStatus& s, nlohmann::json& object);
void writeFields(const MemoryPart& m, nlohmann::json& object);
void writeFields(const CpuPart& c, nlohmann::json& object);
void writeFields(const CommPart& c, nlohmann::json& object);
void writeFields(const AmpPart& a, nlohmann::json& object);

// makeEvent(E::kType, rank, t) with e's fields.
template <class E>
nlohmann::json toEvent(const E& e, int rank, double t) {
  nlohmann::json ev = makeEvent(E::kType, rank, t);
  writeFields(e, ev);
  return ev;
}

// Whether `event` is of E's type.
template <class E>
bool isEvent(const nlohmann::json& event) {
  return stringOr(event, "type", {}) == E::kType;
}

Envelope readEnvelope(const nlohmann::json& event);
StepEvent readStepEvent(const nlohmann::json& event);
EvalEvent readEvalEvent(const nlohmann::json& event);
EpochEvent readEpochEvent(const nlohmann::json& event);
StartEvent readStartEvent(const nlohmann::json& event);
RunEvent readRunEvent(const nlohmann::json& event);
WarningEvent readWarningEvent(const nlohmann::json& event);
ErrorEvent readErrorEvent(const nlohmann::json& event);
EarlyStopEvent readEarlyStopEvent(const nlohmann::json& event);
CheckpointEvent readCheckpointEvent(const nlohmann::json& event);
EndEvent readEndEvent(const nlohmann::json& event);
LadderEvent readLadderEvent(const nlohmann::json& event);
RungStartEvent readRungStartEvent(const nlohmann::json& event);
RungEndEvent readRungEndEvent(const nlohmann::json& event);
LadderEndEvent readLadderEndEvent(const nlohmann::json& event);
HostInfo readHostInfo(const nlohmann::json& object);
SpeedupStatus readSpeedupStatus(const nlohmann::json& object);
MemoryPart readMemoryPart(const nlohmann::json& object);
CpuPart readCpuPart(const nlohmann::json& object);
CommPart readCommPart(const nlohmann::json& object);

}  // namespace wb::proto
