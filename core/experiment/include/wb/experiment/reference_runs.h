#pragma once
// The baseline's reference runs of an experiment: how many samples its training needs to reach a
// target, measured the way MLPerf measures its reference convergence points. `runs` runs of the
// baseline, each with its own seed, each evaluating every `eval_every_steps` steps, so the samples
// to any target up to their best are read off their curves (targetRuns). They run the baseline's
// whole length (not to one target), so every later target can use them.
//
// They are kept per experiment and reused by every try, ladder and tune of it: the folder is
// <store>/<key>, the key (referenceKey) the baseline config with the speedups that keep the math
// at their baseline (they do not change the samples, only how fast they go), the seed and the
// evaluation interval left out, and the dataset's fingerprint. A run already there is never run
// again. Samples to target is seed noise, not host noise: these runs need no quiet host and no
// interleaving, so `parallel` of them may run at once.
//
// The folder: reference.json {key, dataset_id, config, eval_every_steps, resolution, runs [{seed,
// dir, status}]}, rewritten after each run, and runs/seed-<s> (a rerun: seed-<s>-r2, ...). A run
// cut, failed or gone is run again in a new folder, never one that exists or that the record
// names, and the log says which and why ("is gone", "was cut short", "ended failed"); what a run
// wrote is never replaced. A folder whose reference.json is of another experiment (its key or
// config differs) is refused, naming the field; one whose dataset changed is refused naming the
// dataset. A reference.json that cannot be read (cut mid-file, emptied, not a record) or is gone
// is not refused: the run folders are the truth, so it is kept aside (reference.unreadable-1.json),
// said on the log ("… is unreadable: <why>; …"), and rebuilt from the folders under runs/ whose
// config.json is this experiment's (their seed and evaluation interval say which run each is;
// each folder not taken is named with why). Only the runs missing then run.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/stats/convergence.h"
#include "wb/records/run_record.h"

namespace wb::experiment {

inline constexpr int kDefaultReferenceRuns = 5;
// How often a reference run evaluates: the samples to target are known to within one interval
// (stats::SamplesRule::resolution). kReferenceEvaluationsPerRun over the baseline's length (a
// target near its end to within 5 % of its samples), and never more than kReferenceEvalsPerEpoch
// an epoch. One epoch's run evaluates 10 times; a 10-epoch run 20 times, not 100: evaluating
// lenet's 10,000 test images costs 0.26 s against 3.7 s for an epoch's 60,000 training images, so
// at 10 an epoch a reference run cost 1.6 baseline runs whatever its length, and now 1.06 at 10
// epochs (the runs the samples need, at the precision a target near the end needs).
inline constexpr int kReferenceEvalsPerEpoch = 10;
inline constexpr int kReferenceEvaluationsPerRun = 20;

// The seeds of the reference runs (and of a variant's runs to the target): this, this + 1, ...
inline constexpr uint64_t kFirstReferenceSeed = 1001;

// Training samples one optimiser step takes: the per-rank batch × devices × micro-batches.
int64_t samplesPerStep(const Config& config);

// The run in `dir` when it ended ok or early-stopped and evaluated; nullopt when it is missing,
// cut or failed (a run to the target that can be read).
std::optional<records::RunRecord> finishedTargetRun(const std::filesystem::path& dir);

// $WB_REFERENCES_DIR, else "references" beside the runs root (wb::defaultRunsRoot()'s parent).
std::filesystem::path defaultReferencesDir();

// Runs whose timing does not matter, handed to where they run (a cluster's job array: see
// wb/experiment/runs_on_slurm.h). Each ConfigRun is one `workbench-cli run` of `config` into `dir`.
struct ConfigRun {
  Config config;
  std::filesystem::path dir;
  std::string who;  // "reference run, seed 1001"
};
struct ConfigRunEnd {
  std::filesystem::path dir;  // where it ran last (a rerun's own folder)
  std::string status;         // the run's status (summary.json), or "failed"
  std::string problem;        // why it did not finish, in words ("" when it did)
};
// Runs them all, as many at once as it can; one end per run, in order. An Error when they could
// not be run at all (Cancelled: stopped, the finished ones kept).
using RunMany = std::function<Result<std::vector<ConfigRunEnd>>(const std::vector<ConfigRun>&)>;

// Reference runs at once that the cores hold at one core a process (a run of `devices` processes
// takes that many), up to `runs`; on a GPU one (they would share its memory). Small models scale
// poorly with intra-op threads: two lenet runs of one thread each side by side took 0.72 of the
// time of two of two threads one after the other (2-core host), and they measure the same samples
// to target. Not the default: the runs' start-up, evaluation time and rate weigh the parts of a
// try's time to target, and side by side they are each other's load.
int referenceParallel(const Config& baseline, bool onCpu, int runs);

// A run's config when `atOnce` runs share this machine: one whose train.threads is 0 (all cores)
// gets the cores shared among them, each of its processes a share; else it is as given.
Config sharingTheCores(Config config, int atOnce);

struct ReferenceOptions {
  Config baseline;
  std::string dataset_id;          // the dataset's fingerprint (wb::folderFingerprint)
  int64_t train_samples = 0;       // the training split's samples: sets the evaluation interval
  std::filesystem::path store = defaultReferencesDir();
  int runs = kDefaultReferenceRuns;
  int parallel = 1;                // runs at once (referenceParallel); with more than one, a run whose
                                   // train.threads is 0 gets the cores shared among them
  RunMany run_many;                // set: the runs go there (a cluster) instead of `parallel` here
  std::string cli_path;            // workbench-cli
  const std::atomic<bool>* stop = nullptr;
  std::FILE* log = stderr;
  // Set: called with the runs finished (kept ones included) of `runs`, before the first runs
  // and after each one ends (from the thread that ran it, one call at a time).
  std::function<void(int done, int total)> on_progress;
};

struct ReferenceRuns {
  std::filesystem::path dir;       // <store>/<key>
  std::string key;
  int64_t eval_every_steps = 0;
  double resolution = 0;           // training samples between two evaluations
  std::vector<records::RunRecord> runs;  // the finished runs, in seed order
  int reused = 0, ran = 0;         // found in the folder; run now
};

// 16 hex digits naming the experiment's folder in the store.
std::string referenceKey(const Config& baseline, const std::string& dataset_id);
// The evaluation interval in steps for an epoch of `train_samples`: kReferenceEvaluationsPerRun over
// the run's steps (train.epochs, or train.max_steps when it ends sooner), at most
// kReferenceEvalsPerEpoch an epoch. A store folder keeps the interval it was made with
// (reference.json's eval_every_steps), so its runs all share one resolution.
int64_t referenceEvalEvery(const Config& config, int64_t train_samples);

// Loads the experiment's reference runs and runs what is missing (up to `runs` finished ones).
// Errors: InvalidConfig (another experiment's folder, a changed dataset), Io (a file that cannot
// be written), Cancelled (stopped: the finished runs are kept and reused next time), Failed when a
// run fails twice for its seed (the error names the run folder).
Result<ReferenceRuns> ensureReferenceRuns(const ReferenceOptions& options);

// The experiment's reference runs already in `store` that finished (ok or early-stopped), in seed
// order, read only: none runs, nothing is written. Empty when it has none (or its record is
// unreadable: ensureReferenceRuns says why when a try by parts needs them).
std::vector<records::RunRecord> storedReferenceRuns(const std::filesystem::path& store, const Config& baseline,
                                                    const std::string& dataset_id);

// Each run's samples to `target`: those seen before its first evaluation at or above it, or, when
// none reaches it, the samples it ran, censored (reached false).
std::vector<stats::TargetRun> targetRuns(const std::vector<records::RunRecord>& runs, double target);

}  // namespace wb::experiment
