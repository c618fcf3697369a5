#pragma once
// A try by parts, inside (composed_try.cpp runs it): what it measured (Inputs), the variant's runs
// to the target (composed_variant_runs.cpp), the time to target composed from the parts
// (composed_parts.cpp), the looks that settle the runs (composed_looks.cpp) and try.json
// (composed_record.cpp).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "composed_speed.h"
#include "wb/experiment/composed_try.h"
#include "wb/experiment/reference_runs.h"
#include "wb/proto/try_record.h"
#include "wb/records/math_record.h"
#include "wb/records/speed_record.h"
#include "wb/stats/time_to_target.h"

namespace wb::experiment::detail {

inline constexpr const char* kReferencePhase = "the experiment's reference runs";
inline constexpr const char* kVariantPhase = "the variant's runs to the target";
// The variant's looks' `stopped` when no run started because the throughput was contended.
inline constexpr const char* kStoppedContended = "contended";

struct VariantPlan {
  double target = 0, resolution = 0, cap_samples = 0;
  int64_t train_samples = 0;
  bool futile_cap = false;  // each wave's runs stop where they cannot be faster, when before the cap (waveCap)
  int at_once = 1;  // runs side by side after the first (ComposedOptions::variant_parallel)
  RunMany elsewhere;  // set: those after the first go there (ComposedOptions::variant_runs_on)
  int threads = 0;    // the reference runs' train.threads when they shared the cores (referenceThreads)
};

// The variant's run from the references' `index`th seed: kept when it finished (in its folder, or
// in <folder>.rerun, where a cluster's array reran a task Slurm ended), else the folder it runs in
// (a folder cut short is left as it is: the run goes to the next name).
struct VariantSlot {
  uint64_t seed = 0;
  std::filesystem::path dir;
  std::optional<records::RunRecord> kept;
};
VariantSlot variantSlot(const TryOptions& o, int index);

// Whether a variant run's cap sets where it ends: a constant learning rate lets its epochs grow to
// the cap (a schedule would change with them, so its epochs stay and the cap is the configured length).
bool capEndsTheRun(const Config& c, int64_t trainSamples);
// The variant's runs `first`, `first` + 1, ... (`n` of them): the first of all here and alone, the
// others elsewhere when the plan says where, else side by side here when more than one; in seed
// order. The first error, once all have ended.
Result<std::vector<records::RunRecord>> variantWave(const TryOptions& o, const VariantPlan& p, const Hooks& h, int first, int n);
// The reference runs' train.threads when they shared the cores (sharingTheCores set it), else 0.
int referenceThreads(const std::vector<records::RunRecord>& runs);

// The baseline's start-up, evaluation time and rate, from the reference runs no other process slowed
// (compare::Contention), as the variant's first run runs alone; from all of them when none ran so (a
// busy machine, or each beside another: --parallel-runs). Side by side on this host's 2 cores,
// lenet's start-up took 1.88 s against 1.67 s alone: the baseline's would be overstated, and any
// variant faster to the target by about 2.5 % of a one-epoch run. One quiet run borrows all's spread.
struct BaselineTiming {
  stats::LogEstimate startup, rate, eval;
  size_t timed = 0, slowed = 0;  // the reference runs they come from; those another process slowed
};
BaselineTiming baselineTiming(const std::vector<records::RunRecord>& runs, const Hooks& h);

struct Inputs {
  Changes changes;
  records::MathCheckRecord math;
  records::SpeedRecord segments;                 // the training's throughput (segments, trials or unchanged)
  std::optional<records::SpeedRecord> evaluation;  // the evaluation's time, when the evaluation changes
  bool keeps = true;
  int64_t train_samples = 0;
  std::optional<ReferenceRuns> refs;
  BaselineTiming baseline;  // from the reference runs (baselineTiming), once
  std::optional<double> target;
  TryTarget target_rule;  // the target and what it is from
  std::vector<records::RunRecord> variant;
  size_t timed_variant_runs = SIZE_MAX;  // those whose start-up and evaluation count: the first, when the others ran side by side
  stats::SamplesComparison samples;
  stats::VerdictRule rule;  // the composed verdict's: the variant's last look's when its runs were looked at
  nlohmann::json looks;       // the variant's runs' looks: {max_runs, runs, stopped}
  bool samples_assumed = false;  // a larger global batch only: its samples bounded, not run (samplesNeverFewer)
  bool samples_not_run = false;  // futility and a contended throughput: no verdict, no run (settledByContention)
  nlohmann::json replay;      // early stopping: where each reference run would stop (replayStops)
  bool replay_after_target = false;  // ... and every one reached the target first
};

double median(std::vector<double> xs);
double geometricMean(const std::vector<double>& xs);
// The parts of the time to target from what was measured (wb/stats/time_to_target.h).
stats::TimeToTargetParts partsOf(const TryOptions& o, const Inputs& in);

// The samples to target: early stopping replayed on the reference runs, or the variant's runs to
// the target looked at until a look settles them (or a bound, or a contended throughput, answers).
Status measureSamples(const TryOptions& o, const ComposedOptions& c, Inputs& in, const Hooks& h);
// Whether another process used the CPU while the throughput (or the evaluation's time) was measured.
bool throughputContended(const Inputs& in);

// try.json of a try by parts, from what it measured and the composed estimate.
proto::TryRecord composedRecord(const TryOptions& o, const Inputs& in, const stats::TimeToTargetEstimate& e, const std::string& status);
// What a try cut short keeps for the same command to reuse, in words.
std::vector<std::string> keptForRerun(const TryOptions& o, std::pair<int, int> references);

}  // namespace wb::experiment::detail
