#pragma once
// Which method measures a try when the user forces none (--whole-runs, or an option of either
// method): the cheaper of the two for the same precision, from what is known before it starts.
//
// Precision, when the change alters the training's math: by parts compares R reference runs with V
// variant runs, each read to within a tenth of an epoch (variance s²(1/R + 1/V), s the seeds'
// spread of samples to target); a pair of whole runs, each its own seed, differs by two seeds'
// spread and by where the runs happen to evaluate: a run evaluating E times knows its time to
// target only to within 1/E of the run (uniform: sd 1/(E√12)), q = that over the share of the run
// the target takes. P = 2(s² + q²) / (s²(1/R + 1/V)) pairs match by parts' precision: 5 for the
// default 5 and 5 when the runs evaluate often, 18 for lenet's one epoch evaluated once at its 18 %
// spread. A change that keeps the math needs no run to the target by parts; whole runs of it, both
// runs of a pair one seed, carry only the host's noise: kKeptMathPairs pairs.
// Cost, in seconds of the baseline's run T (the stored reference runs' median; unknown without
// them): by parts = its fixed part (the math check and segments in one process; short trials of
// whole processes add kTrialsRuns × T) + the reference runs still missing × T + V runs to the
// target × the share of a run the target takes (the reference runs'; 1 without them); whole runs
// = 2 P T. Without reference runs T is unknown: by parts costs R + V runs and its fixed part (taken
// as one run), whole runs 2P: runs that evaluate rarely (few epochs) go by parts, often in whole runs.
#include <optional>
#include <string>
#include <vector>

#include "wb/experiment/try.h"

namespace wb::experiment {

// The fixed part of a try by parts: the math check and the segments' rounds in one process (here:
// 7-17 s for lenet's levers, docs/experiments.md "What a try costs").
inline constexpr double kPartsFixedS = 15;
// Short trials (3 pairs cut at 300 steps, each a start-up and a third of a lenet epoch at batch
// 64) cost about this many baseline runs.
inline constexpr double kTrialsRuns = 2;
// Whole-run pairs of a change that keeps the math: the host's noise only.
inline constexpr int kKeptMathPairs = 3;

// The seed spread of samples to target taken before the reference runs measure it: mnist-cnn's and
// resnet18's here (9.7 % and 9.0 %; lenet's one epoch: 18 %).
inline constexpr double kAssumedSeedSpread = 0.10;

struct MethodInputs {
  bool math_changes = false;       // the descriptors say the change may alter the samples to target
  bool replay = false;             // early stopping: replayed on the reference runs (needs them)
  bool trials = false;             // its throughput is timed by short trials of whole processes
  double run_s = 0;                // one baseline run's seconds; 0: unknown (no reference runs yet)
  double to_target_share = 1;      // the share of a run the reference runs took to the target
  int references_stored = 0;       // the experiment's finished reference runs
  int reference_runs = 5, variant_runs = 5;  // --reference-runs, --variant-runs
  double evaluations = 1;          // a whole run's evaluations (each epoch, or every eval_every_steps)
  double seed_spread = kAssumedSeedSpread;  // sd of ln samples to target: the reference runs', else assumed
};

struct MethodChoice {
  bool by_parts = true;
  double pairs = 0;                // whole runs' pairs for by parts' precision (a change of the math)
  std::string reason;              // one plain line: why this method
  double parts_s = 0, whole_s = 0; // each method's expected cost (0: not estimated)
};

// The rule (see the header comment).
MethodChoice chooseMethod(const MethodInputs& in);

// The inputs of a try: its changes' descriptors (as a try by parts reads them) and the experiment's
// stored reference runs (storedReferenceRuns; empty: none yet).
MethodInputs methodInputsOf(const TryOptions& options, const std::vector<records::RunRecord>& storedReferences,
                            int referenceRuns, int variantRuns);

}  // namespace wb::experiment
