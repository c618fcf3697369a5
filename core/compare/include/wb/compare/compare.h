#pragma once
// Comparison maths on rank 0's events: each run against a baseline. Pure functions of RunRecords.
//
// Definitions (what each number means, so every view shows the same thing):
//  - time per epoch: mean of the `epoch` events' seconds; else wall time / epochs.
//  - train samples/s (training throughput: training steps only, no evaluation, checkpoints or
//    set-up): summary.train_samples_per_s of a finished run; else Σ Δsamples / Σ Δt over
//    consecutive rank-0 step events within one epoch, which leaves out the first log interval
//    (warm-up) and the evaluation pauses; with fewer than two step events in any epoch, the
//    median of the step events' samples_per_s after the first; else the epoch events' median
//    (train_samples_per_s, else their older samples_per_s). The older summary.samples_per_s
//    (steps + evaluation over the loop's time) is never used: it is not training throughput.
//  - wall time: rank 0's `t` at its last event (the clock time to target is measured on, so the
//    two compare: setup + training + evaluation); summary.wall_s when there are no events. A
//    run still in progress shows its latest `t` (partial).
//  - run wall: summary.run_wall_s (the command, process start to end; older: launcher_wall_s).
//  - eval time: summary.eval_s; else the sum of the eval events' eval_ms.
//  - time to first step: summary.time_to_first_step_s (start-up cost); absent in older runs.
//  - time to target: the first time val_acc ≥ target, linearly interpolated on the `t` axis
//    between the evaluation below the target and the one that reached it; the first evaluation
//    already at the target gives its own `t`. nullopt = "not reached". It counts everything.
//  - contention: summary.cpu.contended (other load ≥ kContendedOtherCores cores); a run in progress
//    with one rank: the mean over its step events of machine busy − process cores.
//  - peak memory: on CUDA the largest per-rank device peak (each GPU has its own limit); on CPU
//    the sum over ranks of each rank's peak RSS (all ranks share the host's memory).
//  - skipped fp16 steps: the last cumulative amp.skipped of rank 0.
//  - effective lr: optim.lr × the optim.lr_scaling factor for the run's ranks (after warm-up).
//  - speedups: baseline / run for times, run / baseline for samples/s (> 1 = faster). A speedup
//    whose run or baseline was measured under contention is computed but flagged (`contended`):
//    every view shows "contended" and the note instead of the multiplier.
//  - repeat groups: runs whose configs are equal but for name and seed (kRepeatIgnoredFields) are
//    repeats of one configuration. The speedup to target and of training throughput of a group
//    against the baseline's group is an estimate with a 95 % interval and a verdict
//    (groupSpeedup, wb/stats/stats.h) against this host's noise band; a group of 1 against a
//    group of 1 has none ("1 run each: no interval"). Only clean runs count: finished (ok or
//    early-stopped), uncontended, host speed steady.
//  - no speedup at all (ComparisonRow::noSpeedupReason): a run on other data (the data fields of
//    kDataFields differ: "not comparable: data.limit_val differs (500 vs 200)"), a run or baseline
//    that did not finish (failed, cancelled, diverged, still running), a contended one, one whose
//    host changed speed during the run (summary.host_speed), and a repeat of the baseline itself
//    ("repeat of the baseline": its difference is noise by construction).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/lr_scaling.h"
#include "wb/common/sysinfo.h"
#include "wb/records/noise.h"
#include "wb/proto/flops_record.h"
#include "wb/records/run_record.h"
#include "wb/stats/stats.h"
#include "wb/render/table.h"

namespace wb::compare {

// Where train_samples_per_s came from (see the definitions above).
enum class ThroughputSource { None, Summary, StepEvents, StepEventsWithWarmup, EpochEvents };

// The CPU the run competed for: whether another load shared the machine while it was measured.
// Whether a run's speed is the machine's: other processes' load, or its own experiment's runs beside
// it (a try's runs side by side), took cores from it.
struct Contention {
  bool contended = false;                  // either: its speed is not the machine's, no speedup from it
  bool shared = false;                     // its own experiment's runs beside it took >= 0.3 cores
  std::optional<double> shared_cores;      // ... how many, on average (never other load)
  std::optional<double> other_load_cores;  // mean busy cores not the run's own (nor its experiment's)
  int cores = 0;                           // the machine's logical cores (0 = unknown)
  std::optional<double> used_cores, asked_cores;
  std::string note;                        // "another process used 0.9 of 2 cores" when contended
  std::vector<ProcessLoad> busiest_others; // who took most of it, busiest first (when recorded)
  // Contended by other processes' load (not only by its experiment's own runs).
  bool byOthers() const { return contended && (!shared || (other_load_cores && isContended(*other_load_cores))); }
};

struct RunMetrics {
  std::optional<double> time_per_epoch_s;
  std::optional<double> train_samples_per_s;  // training throughput: training steps only
  ThroughputSource throughput_source = ThroughputSource::None;
  std::optional<double> wall_s;
  bool wall_partial = false;               // run in progress: wall_s is the latest `t`
  std::optional<double> run_wall_s;        // the whole command
  std::optional<double> eval_s;            // all evaluation
  std::optional<double> time_to_first_step_s;
  Contention contention;
  std::optional<double> time_to_target_s;  // nullopt = not reached
  std::optional<double> best_val_acc;      // 0..1
  std::optional<double> final_val_acc;
  std::optional<double> peak_mem_bytes;
  std::string peak_mem_kind;               // "device" | "host" | ""
  int epochs = 0;
  int64_t steps = 0;
  std::optional<int64_t> skipped_steps;    // fp16 only
  std::optional<double> amp_scale;         // last loss scale (fp16)
  std::optional<records::StepTimes> step_ms;        // mean split after warm-up
  std::optional<double> eval_ms;           // mean evaluation time
  std::optional<proto::FlopsFigures> flops;  // achieved GFLOP/s against the peaks (summary "flops")
  std::string status;
  LrScaling lr;                            // the lr it trained at (runLrScaling)
  // Older or shorter runs: the estimate holds the first log interval (warm-up).
  bool throughputIncludesWarmup() const {
    return throughput_source == ThroughputSource::EpochEvents || throughput_source == ThroughputSource::StepEventsWithWarmup;
  }
};

// The learning rate a run trained at: optim.lr and optim.lr_scaling of its config for its ranks
// (world_size), by the trainer's rule (wb/common/lr_scaling.h).
LrScaling runLrScaling(const records::RunRecord& run);

// Time at which evals first reach `target` (see the header comment); nullopt if never.
std::optional<double> timeToAccuracy(const std::vector<records::EvalSample>& evals, double target);

// Mean step-time split over rank 0's step events after the first (the first alone if only one).
std::optional<records::StepTimes> meanStepTimes(const std::vector<records::StepSample>& steps);

// All metrics of one run; time to target only when `target` is set.
RunMetrics computeMetrics(const records::RunRecord& run, std::optional<double> target);

// The other load seen over a one-rank run's step events (machine busy − process cores, averaged):
// a run in progress has no summary.cpu yet. Feed it in order; use() is nullopt before any.
struct StepLoad {
  void add(const records::StepCpu& cpu);
  std::optional<records::CpuUse> use() const;  // other_load_cores and contended set; cores when known
  double sum = 0;
  int count = 0, cores = 0;
};

// Whether the run shared its CPU (see the definitions above); not contended when unknown.
Contention contentionOf(const records::RunRecord& run);
// The same from a summary's cpu alone (the GUI's runs list reads summary.json only).
Contention contentionOf(const records::CpuUse& cpu);
// Two runs slowed alike by other work: neither contended, or both with the same footprint (threads
// over all ranks, loader workers, processes) under other loads that differ by less than
// kContendedOtherCores. Their ratio is the speedup under that load (the spread of repeats carries
// the extra noise): a busy machine still answers. Runs whose load changed between them, or that
// ask for different cores of a busy machine, are not compared.
bool slowedAlike(const records::RunRecord& a, const Contention& ca, const records::RunRecord& b, const Contention& cb);
// What makes a speedup of `run` over `baseline` untrustworthy, in words ("" when nothing):
// "another process used 0.9 of 2 cores", "the baseline: another process used …".
std::string contentionNote(const RunMetrics& run, const RunMetrics& baseline);

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

// Config fields that never make two runs different configurations (repeats may differ in them).
inline const std::vector<std::string> kRepeatIgnoredFields{"name", "seed"};
// Config fields that change the training or validation data: runs that differ in one are not
// comparable (accuracy on another validation set, throughput on other data).
inline const std::vector<std::string> kDataFields{"data.dataset", "data.limit_train", "data.limit_val",
                                                  "data.val_fraction", "data.image_size"};
// Whether two configs are repeats of one configuration (equal but for kRepeatIgnoredFields).
bool sameConfiguration(const nlohmann::json& a, const nlohmann::json& b);
// "data.limit_val differs (500 vs 200)" for each data field that differs ("" when comparable).
std::string dataDifference(const nlohmann::json& base, const nlohmann::json& run);
// Why a run (of `status`) gives no speedup because it did not finish ("" for ok / early-stopped).
std::string unfinishedNote(const std::string& status);

// The host's speed check (summary.host_speed: a fixed kernel timed before and after training).
struct HostSpeed {
  double before_ms = 0, after_ms = 0;
  double change() const;  // max/min − 1 (0.2 = one 20 % slower than the other)
};
std::optional<HostSpeed> hostSpeedOf(const records::RunRecord& run);
// Whether the host speed check saw the host change speed over a pair of runs: their kernel
// timings against the check's own threshold (hostChangedOverPair, HostNoise::hostKernelBand).
bool hostChangedOverRuns(const records::RunRecord& a, const records::RunRecord& b, double checkBand);
// "the host's speed changed during the run (kernel 3.10 → 4.20 ms, 35 % > the check's own ±8 %
// noise)" when the change exceeds the check's own threshold (HostNoise::hostKernelBand, not the
// run band); "" otherwise or without a check.
std::string hostSpeedNote(const std::optional<HostSpeed>& speed, const records::HostNoise& noise);

// The accuracy time to target is measured at. A change of numerics alone (bf16, another batch
// order) moves the best accuracy by chance, so the default target is the reference's best less
// that chance spread: the experiment's measured seed-to-seed sd (AccuracySpread, `workbench-cli
// noise`), else one standard error of an accuracy scored on the validation set's N images,
// √(p(1 − p)/N). A user's target is used as given.
struct FairTarget {
  double acc = 0;                 // 0..1
  bool user_set = false;
  double reference_best = 0;      // 0..1 (the reference's best; the lowest over its repeats)
  double spread_pp = 0;           // what was taken off, in points
  std::string spread_source;      // "seed-to-seed sd of 6 runs" | "1 SE of 10000 validation images" | ""
  // "74.00 % (the baseline's best 74.44 % less 0.44 points: 1 SE of 10000 validation images)"
  std::string describe() const;
};
FairTarget fairTarget(std::optional<double> user, double referenceBest, int64_t valImages,
                      const std::optional<records::AccuracySpread>& measured);
// The same from a reference's runs: their lowest best, the images of their last evaluation and the
// spread stored for their experiment. nullopt when none evaluated (and no user target).
std::optional<FairTarget> fairTargetOf(std::optional<double> user, const std::vector<const records::RunRecord*>& references);

struct ComparisonRow {
  std::string label;
  std::string dir;
  bool is_baseline = false;
  RunMetrics m;
  std::optional<double> speedup_epoch, speedup_throughput, speedup_wall, speedup_target;  // this run vs the baseline run
  std::optional<double> delta_best_pp, delta_final_pp;
  std::optional<double> mem_ratio;         // run / baseline
  std::vector<ConfigChange> diff;          // vs the baseline's config
  std::string contended;                   // contentionNote(run, baseline): the speedups are not valid
  int group = 0;                           // repeat group (0 = the baseline's configuration), in row order
  int group_runs = 1;                      // runs in this row's group
  bool repeat_of_baseline = false;         // a non-baseline row of the baseline's configuration
  std::string not_comparable;              // dataDifference(baseline, run): no multiplier at all
  std::string unfinished;                  // unfinishedNote of the run, or "the baseline …"
  // hostSpeedNote of the run, or "the baseline: …" of the baseline run's where no clean repeat of the
  // baseline carries this row's estimate (where one does, only the multipliers against that run go)
  std::string host_changed;
  stats::SpeedupEstimate target, throughput;      // this row's group against the baseline's group
  // Why no speedup of this row is shown ("" when they are): not comparable, unfinished,
  // contended, host speed changed, repeat of the baseline (in that order).
  std::string noSpeedupReason() const;
  // The same in a word or two for a table cell or a bar ("not comparable", "failed",
  // "baseline unfinished", "contended", "host speed changed", "repeat of baseline"; "" when shown).
  std::string withheldWord() const;
  bool showsSpeedup() const { return !is_baseline && noSpeedupReason().empty(); }
};

struct Comparison {
  double target_acc = 0;                   // 0..1
  bool target_user_set = false;
  FairTarget target;                       // how target_acc was chosen
  double min_effect = stats::kDefaultMinEffect;   // the verdicts' practical threshold
  records::HostNoise noise;                         // the band the verdicts use
  std::vector<ComparisonRow> rows;         // rows[0] is the baseline
  int groups = 1;                          // repeat groups among the rows
  bool anyRepeats() const;                 // some group holds 2 or more runs
};

// Compares runs against the baseline. target: user-set (0..1), else the baseline's fair target
// (fairTargetOf; 0 when the baseline has no evaluation: then every run "reaches" it at its first
// eval). A run whose dir equals the baseline's is not repeated.
// `noise`: this host's (loadNoise): its measured bands floor the spread of few runs and its
// kernel band judges the host speed check; unmeasured when not given.
Comparison compareRuns(const records::RunRecord& baseline, const std::vector<records::RunRecord>& runs,
                       std::optional<double> target_acc, const records::HostNoise& noise = records::HostNoise{},
                       double min_effect = stats::kDefaultMinEffect);

// The comparison table (one row per run, baseline first) with every column of the contract.
render::Table comparisonTable(const Comparison& comparison);

// Parses a user's target accuracy: "0.85", "85", "85%" → 0.85. Error names the value.
Result<double> parseTargetAccuracy(const std::string& text);

// Helpers shared with the ladder.
std::optional<double> speedupOf(std::optional<double> baseline_time, std::optional<double> run_time);

}  // namespace wb::compare
