#pragma once
// Training throughput of a change that cannot switch within one running process (more devices,
// sharding, the decoded cache, accumulation, the batch...): short interleaved trials, each a
// whole `workbench-cli run` process cut at `steps` training steps, in pairs (baseline then
// variant, then variant then baseline) through the runner, so the host's drift is shared as in
// the segments; never whole runs. The throughput is the pairs' train samples/s ratio (training
// steps only: start-up and evaluation are not in it). Internal to wb_experiment.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "wb/experiment/paired_runner.h"
#include "wb/records/speed_record.h"

namespace wb::experiment::detail {

inline constexpr int64_t kTrialSteps = 300;
inline constexpr int kTrialPairs = 3;  // at most; two when the second's verdict is clear (evaluation: always three)
// An evaluation trial: a few training steps (their rate only weighs the evaluation against the
// training) and kEvalTrialEvaluations evaluations of the configured validation split.
inline constexpr int64_t kEvalTrialSteps = 120;
inline constexpr int kEvalTrialEvaluations = 3;

struct TrialsOptions {
  Config baseline, variant;        // the variant: the baseline with the change's speed fields only
  std::filesystem::path out;       // the runner's folder (pairs.json, runs/): a cut trial continues
  double min_effect = stats::kDefaultMinEffect;
  int64_t steps = kTrialSteps;
  bool evaluation = false;         // time the evaluations (the configured validation split), not the steps
  bool all_pairs = false;          // all kTrialPairs, not stopping at a clear second: a change of the
                                   // math (stats::leastRounds)
  bool slower_settles = false;     // with all_pairs: a second pair clearly slower stops them (the question
                                   // is only "faster?" and a slower throughput answers it: Policy::settle_only_slower)
};

// The segments' record (report/speed_record.h): kind "trials", steps_per_trial, the pairs' rates
// and estimate; an evaluation's: kind "evaluation trials", evaluations_per_trial, baseline_eval_s
// and variant_eval_s (one evaluation's mean seconds per trial) and estimate = the baseline's
// evaluation time over the variant's. Errors as runPairs; Cancelled when stopped.
Result<records::SpeedRecord> measureTrials(const TrialsOptions& options, const Hooks& hooks);

}  // namespace wb::experiment::detail
