#pragma once
// Which method measures a try when the user forces none (--whole-runs, or an option of either
// method): the cheaper of the two for the same precision, from what is known before it starts.
//
// Precision: both methods' intervals on time to target rest on the seed's noise when the change
// alters the training's math: by parts compares R reference runs with V variant runs (variance
// s²(1/R + 1/V)), whole runs P pairs each its own seed (about 2s²/P), so P = 2RV/(R + V) pairs
// match it (5 for the default 5 and 5); the seed spread s weighs both alike and drops out. A
// change that keeps the math needs no run to the target by parts; whole runs of it, both runs of a
// pair one seed, carry only the host's noise: kKeptMathPairs pairs.
// Cost, in seconds of the baseline's run T (the stored reference runs' median; unknown without
// them): by parts = its fixed part (the math check and segments in one process; short trials of
// whole processes add kTrialsRuns × T) + the reference runs still missing × T + V runs to the
// target × the share of a run the target takes (the reference runs'; 1 without them); whole runs
// = 2 P T. Without reference runs a change of the math costs by parts what whole runs cost plus
// the fixed part (their runs are reused by every later try of the experiment, which this does not
// count), so whole runs; with them, by parts unless the run is so short that its fixed part
// outweighs what the runs to the target save.
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

struct MethodInputs {
  bool math_changes = false;       // the descriptors say the change may alter the samples to target
  bool replay = false;             // early stopping: replayed on the reference runs (needs them)
  bool trials = false;             // its throughput is timed by short trials of whole processes
  double run_s = 0;                // one baseline run's seconds; 0: unknown (no reference runs yet)
  double to_target_share = 1;      // the share of a run the reference runs took to the target
  int references_stored = 0;       // the experiment's finished reference runs
  int reference_runs = 5, variant_runs = 5;  // --reference-runs, --variant-runs
};

struct MethodChoice {
  bool by_parts = true;
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
