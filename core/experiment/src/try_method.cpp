// The method a try is measured by when the user forces none (try_method.h).
#include "wb/experiment/try_method.h"

#include <algorithm>
#include <cmath>

#include "composed_speed.h"
#include "wb/common/format.h"
#include "wb/compare/compare.h"
#include "wb/experiment/composed_try.h"
#include "wb/experiment/reference_runs.h"

namespace wb::experiment {

namespace {

std::string about(double s) { return "about " + wb::fmtSeconds(s); }

std::string costs(const MethodChoice& c) {
  return "by parts " + about(c.parts_s) + ", whole runs " + about(c.whole_s) + " for the same precision";
}

std::string runsWord(int n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

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
  const double R = in.reference_runs, V = in.variant_runs, pairs = 2 * R * V / (R + V);
  const int P = static_cast<int>(std::ceil(pairs - 1e-9));
  c.whole_s = 2 * P * T;
  c.parts_s = fixed + missing * T + V * std::clamp(in.to_target_share, 0.0, 1.0) * T;
  if (!(T > 0)) {  // no reference runs yet: by parts costs what whole runs cost plus its fixed part
    c.by_parts = false, c.parts_s = c.whole_s = 0;
    c.reason = "it changes the math and there are no reference runs yet: " + std::to_string(in.reference_runs) + " of them and " +
               runsWord(in.variant_runs, "run") + " to the target cost more than " + runsWord(P, "pair") + " for the same precision";
    return c;
  }
  c.by_parts = c.parts_s < c.whole_s;
  c.reason = "it changes the math and " +
             (missing == 0 ? std::string("the reference runs exist")
                           : std::to_string(in.references_stored) + " of its " + runsWord(in.reference_runs, "reference run") + " exist") +
             ": " + costs(c);
  return c;
}

MethodInputs methodInputsOf(const TryOptions& o, const std::vector<records::RunRecord>& stored, int referenceRuns, int variantRuns) {
  MethodInputs in;
  const detail::Changes changes = detail::changesOf(o);
  in.replay = changes.has(detail::Part::Replay);
  in.trials = changes.has(detail::Part::Trials);
  TryOptions withoutReplay = o;  // whether anything but where the run ends may alter the math
  withoutReplay.variant.speedups.early_stopping = o.baseline.speedups.early_stopping;
  in.math_changes = referenceRunsExpected(withoutReplay);
  in.reference_runs = referenceRuns, in.variant_runs = variantRuns;
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
  }
  return in;
}

}  // namespace wb::experiment
