#pragma once
// `workbench-cli tune`: finds the configuration that reaches the target accuracy soonest on this
// machine, and hands it over as a config to run (best.json) and as torchrun and Lightning
// settings. Qt-free and LibTorch-free: every trial is a whole run through wb::launch.
//
// The search, cheap first:
//  1. the evaluation settings (inference-mode eval × evaluation batch) as short trials on the
//     config as given, ranked on evaluation images/s; the fastest joins every candidate (the
//     evaluation's speed depends on the training settings only through precision and devices,
//     which the finals measure whole);
//  2. the training settings (loader workers from the probe, pin memory, devices with their lr
//     rule, sharding where devices > 1, precision, per-rank batch) as a grid of candidates, each
//     what this machine can run (the ladder's plan: wb/ladder/ladder.h), by successive halving:
//     every candidate trains trial_fraction of an epoch, the fastest 1/eta (and any within this
//     host's run-to-run noise of the last one kept) go on with eta times as many images, until
//     `finalists` are left. Trials are ranked on the time an epoch would take: train images ÷
//     steady training samples/s (after the first log interval) + val images ÷ evaluation images/s;
//  3. the finalists against the config as given: by parts (by_parts: each a try by parts,
//     wb/experiment/composed_try.h, in finals/<id>, sharing the experiment's reference runs;
//     judgeFinalsByParts), else trained to the target as interleaved pairs
//     (wb/experiment/paired_runner.h), with intervals and verdicts. The best is the fastest to the
//     target; the configurations whose time to target cannot be told from it are named. Only a
//     configuration that ran to the target is ever recommended. Trials cannot see accuracy: when
//     every finalist misses the target (more devices' larger global batch trains worse in these
//     epochs, say), a second round (finals-2/) takes the fastest candidates of the first trials
//     that do not carry everything the missing ones shared.
// Early stopping is not searched: it ends a run after it reached the target, so it cannot change
// the time to reach it (the ladder and `whatif early-stopping` measure it).
//
// The folder (out) is the record: batch/ (the batch finder's batch.json, from its start, and its
// runs), tune.json (wb/proto/tune_record.h) from the first trial on and after every trial and
// pair, trials/<id>-<stage><rung>/ (each trial's run), finals/ and finals-2/ (the pairs' folders),
// and at the end tune.md, tune.html, best.json, best-torchrun.sh, best-lightning.py. Run again on
// the same folder, a search cut in any phase continues: finished batch sizes and trials are kept,
// a cut one runs again in a new folder, the finals' pairs continue; another search's folder is
// refused, naming what differs, and a folder that holds no search is refused (checkSearchFolder).
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/experiment/composed_try.h"
#include "wb/experiment/paired_runner.h"
#include "wb/ladder/ladder.h"
#include "wb/proto/tune_record.h"
#include "wb/report/report.h"
#include "wb/render/table.h"

namespace wb::tune {

inline constexpr double kDefaultBudgetS = 600;
inline constexpr double kDefaultTrialFraction = 0.05;
inline constexpr int kDefaultEta = 3;
inline constexpr int kDefaultFinalists = 2;

// What the search and its runs need from the caller.
struct TuneOptions {
  Config base;                                // the experiment as given: the finals' reference
  std::vector<ladder::LadderStep> plan;       // planForMachine's: what this machine can run
  std::vector<int> batches;                   // per-rank train.batch_size values (the base's first)
  std::optional<proto::TuneBatch> batch;      // the batch finder's record (out/batch), when it ran
  std::string lr_rule;                        // the lr rule for a batch other than the base's (linear | sqrt)
  std::vector<std::string> only;              // --only: search just these (kDimensionNames); empty: all
  int64_t train_images = 0, val_images = 0;   // the base config's splits (the epoch estimate)
  std::filesystem::path out;
  experiment::Hooks hooks;                    // the runner's (events: trial_end, then end); on_pair is tune's own
  double budget_s = kDefaultBudgetS;          // the whole search: trials and finals
  double trial_fraction = kDefaultTrialFraction;
  int eta = kDefaultEta;
  int finalists = kDefaultFinalists;
  experiment::Policy policy;                  // the finals' pairs (by parts: the target and min effect)
  // The finals by parts (each finalist a try by parts against the config as given, sharing the
  // experiment's reference runs) unless a finalist's change cannot be measured so; false: pairs.
  bool by_parts = false;
  experiment::ComposedOptions composed;
  // Set: every trial and final is the user's command. It must take {train.max_steps} (a trial
  // trains a fraction of an epoch); candidates that change a setting it has no placeholder for
  // are left out of the search, and the record's note says which.
  experiment::UserCommand user_command;
};

struct TuneOutcome {
  proto::TuneRecord record;
  bool cancelled = false, failed = false;
  int exitCode() const { return cancelled ? 130 : failed ? 1 : 0; }
};

// Runs (or continues) the search in options.out. An Error (InvalidConfig) for an empty search
// space, a budget too small for the trials and one pair of the finals (measured on the first
// trial; the message names --budget and what would do), a --target-acc the config as given never
// reaches (naming one it does), or another search's folder; Io for a folder it cannot write.
Result<TuneOutcome> runTune(const TuneOptions& options);

// Whether `out` can take a search: new, empty, or holding one of `records` (the search's own
// files: tune.json, batch/batch.json) to continue. InvalidConfig otherwise, naming what is there.
Status checkSearchFolder(const std::filesystem::path& out, const std::vector<std::string>& records);

// ---- the parts, for tests and the batch finder ---------------------------------------------

// The short names of the dimensions (--only): each speedup with a dimension of its own (Search::
// Dimension, devices with the speedups that ride on it), batch,
// levers, eval (the Search::Evaluation speedups and the evaluation batch).
const std::vector<std::string>& dimensionNames();

struct Space {
  std::vector<proto::TuneDimension> dimensions;  // searched and not, each with its note
  std::vector<proto::TuneCandidate> eval;        // stage 1: the evaluation settings on the base
  std::vector<proto::TuneCandidate> train;       // stage 2: the grid (ids c01, c02, ...)
};
// The space of this machine (candidates' configs are whole; the training grid's carry the base's
// evaluation settings).
Space buildSpace(const TuneOptions& options);
// A candidate's whole config: its own, with the evaluation sweep's pick (r.eval_choice) for a
// training candidate. InvalidConfig for an unknown id.
Result<Config> candidateConfig(const proto::TuneRecord& r, const std::string& id);
// The candidate `id` of r, or nullptr.
const proto::TuneCandidate* findCandidate(const proto::TuneRecord& r, const std::string& id);
// Its label with the evaluation sweep's pick: "workers 2, inference-mode eval off".
std::string candidateLabel(const proto::TuneRecord& r, const std::string& id);

// The config a trial runs: one epoch capped at `samples` training images (train.max_steps),
// evaluating at most `val_limit` images, no early stopping, log intervals short enough to leave
// a steady rate after the first.
Config trialConfig(const Config& c, int64_t samples, int64_t val_limit);

// Successive halving's promotion: of the trials of one rung (failed ones never go on), the `keep`
// fastest by epoch_s measured without contention, and any within `band` (a share, one run's
// noise) of the last of them, at most 2 × keep; places left are filled by contended trials, in
// their order (said in the rule). Returns the ids in rank order and the rule in words.
std::pair<std::vector<std::string>, std::string> promote(const std::vector<proto::TuneTrial>& rung, int keep, double band);

// When every finalist of r missed the target: at most `finalists` other candidates for a second
// round, the fastest of the first round of trials (rung 0, quiet, ok) that do not carry every
// setting the missing ones had in common. Empty when a finalist did not simply miss the target,
// the missing ones share nothing, or no candidate is left.
std::vector<std::string> secondChance(const proto::TuneRecord& r, int finalists);

// The whole-process time an epoch would take by a trial's figures; nullopt when it lacks one.
std::optional<double> epochEstimate(const proto::TuneTrial& t, int64_t train_images, int64_t val_images);

// ---- take-away ---------------------------------------------------------------------------

// best.json's config: the best candidate's (or the config as given), named so.
std::optional<Config> bestConfig(const proto::TuneRecord& r);
// The same settings as a torchrun command of a PyTorch script and as PyTorch Lightning arguments.
std::string torchrunCommand(const Config& c);
std::string lightningArguments(const Config& c);
// The same settings as a Slurm batch script: srun runs the worker with best.json (at `bestJson`),
// MASTER_ADDR the job's first node.
std::string sbatchScript(const Config& c, const std::filesystem::path& bestJson);
// The tables: the finals (speedup to target with its interval, verdict against the best) and the
// trials (per rung: samples/s, evaluation images/s, epoch estimate, promoted or not).
report::Report tuneReport(const proto::TuneRecord& r);
render::Table finalsTable(const proto::TuneRecord& r);
// The search's answer in one sentence, from its record alone: the configuration to use, by how
// much it is faster to the target than the config as given (with its interval), how sure, and
// what ties it; or to keep the config as given and why. tune.json stores it ("answer").
std::string tuneAnswer(const proto::TuneRecord& r);
// The short table `tune` prints under the answer: each finalist, its decision, × to target.
render::Table tuneAnswerTable(const proto::TuneRecord& r);
// Writes tune.json and, once it ended, tune.md, tune.html and the best.* files.
Status writeTuneOutputs(const std::filesystem::path& out, const proto::TuneRecord& r);

}  // namespace wb::tune
