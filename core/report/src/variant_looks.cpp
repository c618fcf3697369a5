#include "wb/report/variant_looks.h"

#include <algorithm>
#include <cmath>

namespace wb::report {

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
  return seq.at(runs);
}

LookStop VariantLooks::stopAfter(int runs, const TimeToTargetEstimate& e) const {
  const LookStop settled = runs < kMinVariantRuns ? LookStop::Continue : settledBy(e, min_effect);
  return settled == LookStop::Continue && runs >= max_runs ? LookStop::AllRuns : settled;
}

std::string lookStopName(LookStop s) {
  switch (s) {
    case LookStop::Clear: return "clear";
    case LookStop::Negligible: return "negligible";
    case LookStop::SlowerBound: return "slower bound";
    case LookStop::AllRuns: return "all runs";
    case LookStop::Continue: break;
  }
  return "";
}

}  // namespace wb::report
