#include "wb/stats/variant_looks.h"

#include <algorithm>
#include <cmath>

namespace wb::stats {

namespace {

LookStop settledBy(const TimeToTargetEstimate& e, double minEffect) {
  const SpeedupEstimate& s = e.speedup;
  const double edge = 1 + std::max(minEffect, 0.0);
  if (e.bound == SamplesBound::AtMost) return std::isfinite(s.point) && s.point * edge < 1 ? LookStop::SlowerBound : LookStop::Continue;
  if (e.bound != SamplesBound::Exact) return LookStop::Continue;
  if (s.verdict == Verdict::Faster || s.verdict == Verdict::Slower) return LookStop::Clear;
  if (std::isfinite(s.lo) && std::isfinite(s.hi) && s.lo * edge >= 1 && s.hi <= edge) return LookStop::Negligible;
  return LookStop::Continue;
}

}  // namespace

VerdictRule VariantLooks::ruleAt(int runs) const {
  Sequential seq;
  seq.max_pairs = std::max(max_runs, kMinVariantRuns);
  seq.min_effect = min_effect;
  return seq.at(std::max(runs, kMinVariantRuns));  // one run (a futility look): judged as the first look
}

LookStop VariantLooks::stopAfter(int runs, const TimeToTargetEstimate& e) const {
  const LookStop settled = runs < kMinVariantRuns ? LookStop::Continue : settledBy(e, min_effect);
  if (settled == LookStop::Continue && runs >= max_runs) return LookStop::AllRuns;
  if (settled != LookStop::Continue || !futility) return settled;
  const SpeedupEstimate& s = e.speedup;
  if (e.bound == SamplesBound::AtMost)  // a bound above: faster only if even it clears the threshold
    return std::isfinite(s.point) && s.point < 1 + std::max(min_effect, 0.0) ? LookStop::CannotBeFaster : settled;
  if (e.bound != SamplesBound::Exact) return settled;
  const double last = ruleAt(max_runs).alpha;
  return chanceOfFaster(s.point, e.log_se, runs, max_runs, last, min_effect) < kFutilityChance ? LookStop::CannotBeFaster
                                                                                                : settled;
}

std::string lookStopName(LookStop s) {
  switch (s) {
    case LookStop::Clear: return "clear";
    case LookStop::Negligible: return "negligible";
    case LookStop::SlowerBound: return "slower bound";
    case LookStop::CannotBeFaster: return "cannot be faster";
    case LookStop::AllRuns: return "all runs";
    case LookStop::Continue: break;
  }
  return "";
}

}  // namespace wb::stats
