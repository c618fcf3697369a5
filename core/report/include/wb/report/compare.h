#pragma once
// Comparison maths on rank 0's events: each run against a baseline. Pure functions of RunRecords.
//
// Definitions (what each number means, so every view shows the same thing):
//  - time per epoch: mean of the `epoch` events' seconds; else wall time / epochs.
//  - samples/s: Σ Δsamples / Σ Δt over consecutive rank-0 step events within one epoch, which
//    leaves out the first log interval of the run (warm-up) and the evaluation pauses; with fewer
//    than two step events in any epoch, the mean of the step events' samples_per_s after the
//    first; else the epoch events' mean; else summary.samples_per_s.
//  - wall time: rank 0's `t` at its last event (the clock time to target is measured on, so the
//    two compare: setup + training + evaluation); summary.wall_s when there are no events. A
//    run still in progress shows its latest `t` (partial).
//  - time to target: the first time val_acc ≥ target, linearly interpolated on the `t` axis
//    between the evaluation below the target and the one that reached it; the first evaluation
//    already at the target gives its own `t`. nullopt = "not reached".
//  - peak memory: on CUDA the largest per-rank device peak (each GPU has its own limit); on CPU
//    the sum over ranks of each rank's peak RSS (all ranks share the host's memory).
//  - skipped fp16 steps: the last cumulative amp.skipped of rank 0.
//  - speedups: baseline / run for times, run / baseline for samples/s (> 1 = faster).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/report/run_record.h"
#include "wb/report/table.h"

namespace wb::report {

struct RunMetrics {
  std::optional<double> time_per_epoch_s;
  std::optional<double> samples_per_s;
  bool throughput_has_warmup = false;      // no interval after the first: warm-up included
  std::optional<double> wall_s;
  bool wall_partial = false;               // run in progress: wall_s is the latest `t`
  std::optional<double> time_to_target_s;  // nullopt = not reached
  std::optional<double> best_val_acc;      // 0..1
  std::optional<double> final_val_acc;
  std::optional<double> peak_mem_bytes;
  std::string peak_mem_kind;               // "device" | "host" | ""
  int epochs = 0;
  int64_t steps = 0;
  std::optional<int64_t> skipped_steps;    // fp16 only
  std::optional<double> amp_scale;         // last loss scale (fp16)
  std::optional<StepTimes> step_ms;        // mean split after warm-up
  std::optional<double> eval_ms;           // mean evaluation time
  std::string status;
};

// Time at which evals first reach `target` (see the header comment); nullopt if never.
std::optional<double> timeToAccuracy(const std::vector<EvalSample>& evals, double target);

// Mean step-time split over rank 0's step events after the first (the first alone if only one).
std::optional<StepTimes> meanStepTimes(const std::vector<StepSample>& steps);

// All metrics of one run; time to target only when `target` is set.
RunMetrics computeMetrics(const RunRecord& run, std::optional<double> target);

// One changed leaf of the config, by dotted path; values as compact JSON ("4", "\"bf16-mixed\"").
struct ConfigChange {
  std::string path;
  std::string before;  // "(absent)" when only the run has it
  std::string after;
};
std::vector<ConfigChange> configDiff(const nlohmann::json& base, const nlohmann::json& run);
// "speedups.workers 0 → 4; speedups.precision 32-true → bf16-mixed" ("same config" when empty).
// Fields that always differ between runs and explain nothing (name, seed) are listed too.
std::string describeDiff(const std::vector<ConfigChange>& diff);

struct ComparisonRow {
  std::string label;
  std::string dir;
  bool is_baseline = false;
  RunMetrics m;
  std::optional<double> speedup_epoch, speedup_throughput, speedup_wall, speedup_target;
  std::optional<double> delta_best_pp, delta_final_pp;
  std::optional<double> mem_ratio;         // run / baseline
  std::vector<ConfigChange> diff;          // vs the baseline's config
};

struct Comparison {
  double target_acc = 0;                   // 0..1
  bool target_user_set = false;
  std::vector<ComparisonRow> rows;         // rows[0] is the baseline
};

// Compares runs against the baseline. target: user-set (0..1), else the baseline's best val acc
// (0 when the baseline has no evaluation: then every run "reaches" it at its first eval).
// A run whose dir equals the baseline's is not repeated.
Comparison compareRuns(const RunRecord& baseline, const std::vector<RunRecord>& runs,
                       std::optional<double> target_acc);

// The comparison table (one row per run, baseline first) with every column of the contract.
Table comparisonTable(const Comparison& comparison);

// Parses a user's target accuracy: "0.85", "85", "85%" → 0.85. Error names the value.
Result<double> parseTargetAccuracy(const std::string& text);

// Helpers shared with the ladder.
std::optional<double> speedupOf(std::optional<double> baseline_time, std::optional<double> run_time);
double median(std::vector<double> values);

}  // namespace wb::report
