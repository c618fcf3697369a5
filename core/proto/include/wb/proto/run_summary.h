#pragma once
// summary.json as a type: what a run measured about itself and how it ended, written once when
// the run ends (by core/launch's endRun, from the trainer's part and the launcher's) and read by
// core/records, the CLI and the window. The end event carries the same record.
//
// The keys are the field list in run_summary.cpp (one line a field: adding a field is adding a
// member here and its line there). Reading is tolerant, as for the events: a missing key, null
// (a non-finite number) or a value of another type leaves the member as it was (nullopt for
// the optional ones); it never throws. Fields the list does not know (a newer writer's) are kept
// in `unknown` and written back, so a read-modify-write (renaming a run) loses nothing.
//
// Most members are optional: a writer that did not know a figure leaves it out (a rank that
// failed before training writes only status and error), and old run folders lack the newer
// ones. A number the writer knew to be unknown (a best accuracy without an evaluation) is NaN,
// written as null: take figures through finite().
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/processes.h"
#include "wb/proto/flops_record.h"

namespace wb::proto {

// summary.cpu: the machine's CPU over the whole run, in cores. The launcher's view (used_cores,
// other_load_cores: from /proc/stat against every rank's CPU time) replaces the trainer's own
// (process_cores, machine_busy_cores, other_cores), which only a rank started alone leaves.
struct RunCpu {
  int cores = 0;                             // logical cores of the machine; 0: unknown
  std::optional<int> asked_cores;            // intra-op threads, summed over ranks
  std::optional<double> used_cores;          // the ranks' CPU seconds / the launcher's wall time
  std::optional<double> other_load_cores;    // busy cores not the run's own, averaged over the run,
                                             // its experiment's other runs left out (shared_cores)
  std::optional<bool> contended;             // the writer's verdict (wb::isContended(other load))
  std::optional<double> shared_cores;        // cores its own experiment's other processes used over the
                                             // run (its runs side by side), averaged; not other load
  std::optional<bool> shared;                // the writer's verdict (wb::isContended(shared_cores)):
                                             // it shared the cores with them, its speed is not the machine's
  std::optional<bool> oversubscribed;        // more ranks than cores (run --allow-oversubscribe)
  std::optional<std::string> note;           // the writer's words, when contended or shared
  std::optional<std::vector<ProcessLoad>> busiest_others;  // who used the most of it, busiest first (the launcher's)
  std::optional<int> threads;                // rank 0's intra-op threads at the end
  std::optional<int> min_threads;            // ... and the fewest it had (fewer while others took cores)
  std::optional<double> process_cores;       // a rank alone: its own use,
  std::optional<double> machine_busy_cores;  //   the machine's,
  std::optional<double> other_cores;         //   and the difference
  nlohmann::json unknown = nlohmann::json::object();  // fields this list does not know, kept
};

// summary.host_speed: a fixed single-threaded kernel timed before and after training
// (wb/train/host_speed.h): a host that changed its own speed during the run shows here.
struct HostSpeedCheck {
  double before_ms = 0, after_ms = 0;        // best of a few timings, each side
  std::string kernel;                        // what was timed, in words
};

struct RunSummary {
  // ---- how it ended, and which run (the launcher's) ---------------------------------------
  std::optional<std::string> status;           // ok | failed | cancelled | early-stopped | diverged
  std::optional<std::string> run_id;
  std::optional<std::string> name;
  std::optional<std::string> run_dir;
  std::optional<std::string> error;            // why it failed (or what it owes: a checkpoint)
  std::optional<std::string> message;          // the trainer's note on its end
  std::optional<int> failed_rank;
  std::optional<std::string> log_tail;         // the failed rank's last log lines
  std::optional<std::string> training_status;  // the training's own end, when lost events failed the run
  std::optional<int64_t> events_lost;          // records events.jsonl could not take
  std::optional<int64_t> events_late;          // records written late, once it took them again
  std::optional<std::string> events_error;     // the events file's last failure, in words
  std::optional<bool> failed_rank_stalled;     // failed_rank stopped answering (stopped), not died
  std::optional<std::string> fine_tuned_from;  // run --resume --fine-tune: the dataset the weights came from

  // ---- what ran (the trainer's) -----------------------------------------------------------
  std::optional<std::string> device;           // rank 0's: "cpu" | "cuda:0"
  std::optional<int> world_size;
  std::optional<int> epochs;                   // epochs run
  std::optional<int64_t> steps;                // training steps, all lives of the run
  std::optional<int64_t> optimizer_steps;
  std::optional<int64_t> samples;              // samples seen, all lives, all ranks

  // ---- clocks, each named for what it covers (seconds) ------------------------------------
  std::optional<double> wall_s;                // the trainer's loop: steps + evaluation + checkpoints
  std::optional<int64_t> train_samples;        // samples trained in this life, all ranks
  std::optional<double> train_s;               // training steps only (this life)
  std::optional<double> train_samples_per_s;   // train_samples / train_s
  std::optional<double> eval_s;
  std::optional<double> checkpoint_s;
  std::optional<double> time_to_first_step_s;  // from the start of the command the user ran
  std::optional<double> first_step_unix;       // when rank 0's first step ended (unix seconds)
  std::optional<double> run_wall_s;            // the command's whole wall time
  std::optional<double> launcher_wall_s;       // the launcher's (older runs' only whole-run clock)
  std::optional<RunCpu> cpu;
  std::optional<HostSpeedCheck> host_speed;

  // ---- what it reached ---------------------------------------------------------------------
  std::optional<double> best_val_acc;          // 0..1; NaN: no evaluation
  std::optional<double> final_val_acc;
  std::optional<double> best_val_loss;
  std::optional<int64_t> peak_mem;             // bytes: device peak on CUDA, rss peak on the CPU
  std::optional<int64_t> amp_skipped;          // fp16 steps the loss scaler skipped
  std::optional<int> best_epoch;               // early stopping's best (0-based), and its value
  std::optional<double> best_value;
  std::optional<bool> best_weights_restored;   // early-stopped with checkpoints: best.pt reloaded
  std::optional<std::string> best_weights_note;  // why not
  // Train to target (train.stop_at_accuracy): the target, and when the first evaluation reached it
  // (samples over every rank and life, training steps); absent (null) when it was not reached.
  std::optional<double> target_val_acc;
  std::optional<int64_t> samples_to_target;
  std::optional<int64_t> steps_to_target;
  nlohmann::json checkpoints_late;  // [words]: checkpoint writes that failed, then were superseded (absent: none)
  std::optional<FlopsFigures> flops;           // FLOPs per step, GFLOP/s against the peaks, compute-only step

  nlohmann::json unknown = nlohmann::json::object();  // fields this list does not know, kept
};

// The value when it is there and finite.
inline std::optional<double> finite(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? v : std::nullopt;
}

// The command's whole wall time: run_wall_s, or an older run's launcher_wall_s.
inline std::optional<double> runWallSeconds(const RunSummary& s) {
  return finite(s.run_wall_s) ? finite(s.run_wall_s) : finite(s.launcher_wall_s);
}

// summary.json's object: the fields passed on first, then the set members (absent ones left out;
// a NaN is written as null).
nlohmann::json toJson(const RunSummary& summary);
nlohmann::json toJson(const RunCpu& cpu);  // summary.cpu's object
// A list of other processes' loads (summary.cpu.busiest_others, a segments probe's), each
// {pid, name, cores}; the reader skips what is not such an object.
nlohmann::json toJson(const std::vector<ProcessLoad>& loads);
std::vector<ProcessLoad> readProcessLoads(const nlohmann::json& list);
// Never throws; anything but an object reads as an empty summary.
RunSummary readRunSummary(const nlohmann::json& summary);

}  // namespace wb::proto
