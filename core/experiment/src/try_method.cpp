// The method a try is measured by when the user forces none (try_method.h).
#include "wb/experiment/try_method.h"

#include <algorithm>
#include <cmath>

#include "composed_speed.h"
#include "wb/common/format.h"
#include "wb/compare/compare.h"
#include "wb/experiment/composed_try.h"
#include "wb/experiment/reference_runs.h"
#include "wb/stats/convergence.h"

namespace wb::experiment {

namespace {

std::string about(double s) { return "about " + wb::fmtSeconds(s); }

std::string costs(const MethodChoice& c) {
  return "by parts " + about(c.parts_s) + ", whole runs " + about(c.whole_s) + " for the same precision";
}

std::string runsWord(int n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

// A whole run's evaluations: one an epoch, or every eval_every_steps steps (the steps known when the
// training split's size is set: data.limit_train; else taken as ten an epoch).
double evaluationsOf(const Config& c) {
  const double epochs = std::max(1, c.train.epochs);
  if (c.train.eval_every_steps <= 0) return epochs;
  if (c.data.limit_train <= 0) return 10 * epochs;
  const double steps = epochs * double(c.data.limit_train) / double(std::max<int64_t>(1, samplesPerStep(c)));
  return std::max(epochs, steps / double(c.train.eval_every_steps));
}

}  // namespace

MethodChoice chooseMethod(const MethodInputs& in) {
  MethodChoice c;
  const double T = in.run_s;
  const int missing = std::max(0, in.reference_runs - in.references_stored);
  const double fixed = kPartsFixedS + (in.trials ? kTrialsRuns * T : 0);
  if (!in.math_changes && !in.replay) {  // one process times it; whole runs carry the host's noise only
    c.parts_s = fixed, c.whole_s = 2 * kKeptMathPairs * T;
    c.by_parts = !(T > 0) || c.parts_s <= c.whole_s;
    c.reason = !(T > 0) ? "it keeps the training's math: one process times it (" + about(fixed) + "), where whole runs take " +
                              runsWord(kKeptMathPairs, "pair")
                        : "it keeps the training's math: " + costs(c);
    return c;
  }
  if (!in.math_changes) {  // early stopping alone: replayed on the reference runs
    c.parts_s = 2 + missing * T, c.whole_s = 2 * kKeptMathPairs * T;
    c.by_parts = missing < 2 * kKeptMathPairs && (!(T > 0) || c.parts_s <= c.whole_s);
    c.reason = "early stopping is replayed on the reference runs (" +
               (missing == 0 ? std::string("they exist") : std::to_string(missing) + " to make") + ")" +
               (T > 0 ? ": " + costs(c) : ", where whole runs take " + runsWord(kKeptMathPairs, "pair"));
    return c;
  }
  if (in.reference_runs <= 0 || in.variant_runs <= 0) {
    c.by_parts = false;
    c.reason = "it changes the math and by parts is given no runs to the target";
    return c;
  }
  const double R = in.reference_runs, V = in.variant_runs, share = std::clamp(in.to_target_share, 0.05, 1.0);
  const double s2 = std::pow(std::max(in.seed_spread, 0.01), 2);
  const double q = 1.0 / (std::max(in.evaluations, 1.0) * std::sqrt(12.0)) / share;
  c.pairs = 2 * (s2 + q * q) / (s2 * (1 / R + 1 / V));
  const int P = static_cast<int>(std::ceil(c.pairs - 1e-9));
  c.whole_s = 2 * c.pairs * T;
  c.parts_s = fixed + missing * T + V * share * T;
  if (!(T > 0)) {  // no reference runs yet: by parts costs (R + V) T plus its fixed part (taken as one run), whole runs 2 P T
    c.by_parts = 2 * c.pairs > R + V + 1;
    c.parts_s = c.whole_s = 0;
    const std::string make = std::to_string(in.reference_runs) + " reference runs and " + runsWord(in.variant_runs, "run") +
                             " to the target";
    c.reason = c.by_parts ? "it changes the math; with no reference runs yet, " + make + " cost less than the " +
                                runsWord(P, "pair") + " of whole runs the same precision needs"
                          : "it changes the math and there are no reference runs yet: " + make + " cost more than the " +
                                runsWord(P, "pair") + " of whole runs that give the same precision";
    return c;
  }
  c.by_parts = c.parts_s < c.whole_s;
  c.reason = "it changes the math and " +
             (missing == 0 ? std::string("the reference runs exist")
                           : std::to_string(in.references_stored) + " of its " + runsWord(in.reference_runs, "reference run") + " exist") +
             ": " + costs(c) + " (" + runsWord(P, "pair") + ")";
  return c;
}

MethodInputs methodInputsOf(const TryOptions& o, const std::vector<records::RunRecord>& stored, int referenceRuns, int variantRuns) {
  MethodInputs in;
  const detail::Changes changes = detail::changesOf(o);
  in.replay = changes.has(detail::Part::Replay);
  in.trials = changes.has(detail::Part::Trials);
  // Whether anything but where the run ends (replayed) or the evaluation (timed alone) may alter the math.
  TryOptions training = o;
  training.variant.speedups.early_stopping = o.baseline.speedups.early_stopping;
  training.variant.speedups.inference_eval = o.baseline.speedups.inference_eval;
  training.variant.train.eval_batch_size = o.baseline.train.eval_batch_size;
  in.math_changes = referenceRunsExpected(training);
  in.reference_runs = referenceRuns, in.variant_runs = variantRuns;
  in.evaluations = evaluationsOf(o.baseline);
  std::vector<double> walls, shares;
  std::vector<const records::RunRecord*> finished;
  for (const auto& r : stored) {
    const auto m = compare::computeMetrics(r, std::nullopt);
    if (auto w = m.run_wall_s ? m.run_wall_s : m.wall_s) walls.push_back(*w), finished.push_back(&r);
  }
  in.references_stored = static_cast<int>(finished.size());
  if (walls.empty()) return in;
  std::sort(walls.begin(), walls.end());
  in.run_s = walls[walls.size() / 2];
  if (const auto target = compare::fairTargetOf(std::nullopt, finished)) {
    for (const auto& t : targetRuns(stored, target->acc))
      if (t.reached) shares.push_back(t.samples);
    int64_t ran = 0;
    for (const auto* r : finished)
      if (!r->steps.empty()) ran = std::max(ran, r->steps.back().samples);
    if (!shares.empty() && ran > 0) {
      std::sort(shares.begin(), shares.end());
      in.to_target_share = shares[shares.size() / 2] / double(ran);
    }
    if (const double spread = stats::seedSpread(targetRuns(stored, target->acc)); std::isfinite(spread) && spread > 0)
      in.seed_spread = spread;
  }
  return in;
}

}  // namespace wb::experiment
