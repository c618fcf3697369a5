#pragma once
// `try` by parts: the time to the target composed from what decides it, each part measured where it
// is cheap and precise (wb/stats/time_to_target.h) instead of whole runs in pairs:
//   1. whether the change keeps the training's math: `workbench-cli probe math` (the first steps'
//      losses from one seed, a few seconds);
//   2. training throughput: `workbench-cli probe segments` (interleaved segments in one process) for
//      what switches in one process, else short interleaved trials of whole processes cut at a
//      few hundred steps (more devices, sharding, the decoded cache, accumulation, the batch);
//   3. samples to target: the experiment's reference runs (reference_runs.h: stored, reused) and,
//      when the math changes, as many runs of the variant from the same seeds, each stopping at the
//      target or at `cap` times the reference's samples (stats::compareSamples): the first alone,
//      the rest `variant_parallel` at once, looked at in seed order as if one after another;
//   4. composed: start-up + samples ÷ throughput + evaluations × evaluation time, with the delta
//      method's interval and the product's verdict.
// A change that keeps the math needs no run to the target at all: its speedup is the throughput's,
// weighted by the reference runs' start-up and evaluation when the experiment has them. One that
// changes only the optimiser's numbers takes its start-up and evaluations from them too. The
// measurements are processes of their own (the runner stays LibTorch-free); each one's result is
// kept in the try's folder (parts/ the two configs, math.json, segments.json, runs/variant-seed-<s>) and reused when the
// same command continues a cut try.
//
// try.json gains method "composed" and: math, throughput (the segments' estimate), samples (the
// comparison, when the math changes), references {dir, key, runs, reused, ran}, composed (the
// estimate and its parts), words; estimate.to_target is the composed speedup and
// estimate.throughput the segments', so readers of whole-run tries read it too.
#include <filesystem>
#include <functional>
#include <string>

#include "wb/experiment/reference_runs.h"
#include "wb/experiment/try.h"

namespace wb::experiment {

struct ComposedOptions {
  int reference_runs = kDefaultReferenceRuns;  // the baseline's runs to the target (kept per experiment)
  int variant_runs = kDefaultReferenceRuns;    // the variant's, when its math changes
  int parallel = 1;                            // reference runs at once; 0: referenceParallel's (their
                                               // timings, which weigh the parts, then slow each other)
  int variant_parallel = 0;  // the variant's runs at once after its first, which runs alone: its start-up and
                             // evaluation time are the variant's parts, the others give their samples to
                             // the target only (side by side they slow each other); 0: referenceParallel's
  double cap = 3;                              // a variant run stops at this × the reference's samples
  bool futility = false;  // the variant's runs (and, when the math is kept, the segments' rounds) also
                          // stop once it cannot be shown faster (variant_looks.h, rounds_rule.h): for
                          // a question that is only "faster?" (the ladder's), not "by how much?"
  std::filesystem::path references = defaultReferencesDir();
  // Set (a try inside a Slurm job): the variant's runs after its first go to the cluster, all the
  // rest at once as one job array (RunMany; variant_parallel N > 1: arrays of N), Slurm's files in
  // the folder given (<out>/slurm); variant_parallel 1 keeps them in the job, one after another.
  std::function<RunMany(const std::filesystem::path& folder)> variant_runs_on;
};

// "" when the try can be composed; else why it needs whole runs ("train.epochs cannot change
// within one process"; "the runs are your own command").
std::string composedUnavailable(const TryOptions& options);

// Whether a try by parts of this change will need the experiment's reference runs, as its
// descriptors say before the math check measures it: a change that may alter the training's math
// (its samples to target) or that early stopping replays on them.
bool referenceRunsExpected(const TryOptions& options);

// Whether the change's only effect on the training's math is a larger global batch (more devices, a
// larger batch, more accumulation) at an effective learning rate scaled at most in proportion.
// Such a change is taken to need no fewer samples to the target than the baseline: the samples a
// target needs have not been seen to fall as the batch grows at a proportionally scaled lr
// (Shallue et al. 2018, "Measuring the Effects of Data Parallelism on Neural Network Training";
// McCandlish et al. 2018's model: samples = E_min (1 + B / B_noise), rising with the batch B).
// With futility (the ladder's and tune's question, "faster?") such a variant whose throughput is
// too slow to be faster even so (its quickest trial's start-up, its evaluation shared by its
// ranks) is answered by that bound, without a run to the target: try.json's samples say
// "assumed", the estimate is "at most".
bool samplesNeverFewer(const TryOptions& options);

// Runs (or continues) the try in options.out by parts. Errors: InvalidConfig (a config this machine
// cannot run, a reference folder of another experiment), Cancelled, Io, a measurement that failed
// (its log named).
Result<TryResult> runComposedTry(const TryOptions& options, const ComposedOptions& composed, const Hooks& hooks);

// The table of a composed try.json: time to target, throughput, samples to target; the split in words.
render::Table composedTryTable(const nlohmann::json& tryDoc);

}  // namespace wb::experiment
