#include "wb/stats/convergence.h"

#include <algorithm>
#include <cmath>

#include "wb/common/format.h"

namespace wb::stats {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Welch's degrees of freedom for two variances of means with their own df.
double satterthwaite(double v1, double df1, double v2, double df2) {
  const double den = (df1 > 0 ? v1 * v1 / df1 : 0) + (df2 > 0 ? v2 * v2 / df2 : 0);
  return den > 0 ? (v1 + v2) * (v1 + v2) / den : df1 + df2;
}

// An arm of one run borrows the other arm's seed spread (one run against reference points).
void borrowSpread(ArmSamples& arm, const ArmSamples& other) {
  if (arm.runs != 1 || other.runs < 2) return;
  arm.log_sd = other.log_sd;
  arm.samples.log_se = other.log_sd;
  arm.samples.df = other.samples.df;
}

SamplesVerdict fromVerdict(Verdict v) {
  if (v == Verdict::Faster) return SamplesVerdict::More;
  if (v == Verdict::Slower) return SamplesVerdict::Fewer;
  return v == Verdict::WithinNoise ? SamplesVerdict::WithinNoise : SamplesVerdict::NoInterval;
}

// Censored runs leave only one side of the interval (see the header).
void applyBound(SamplesComparison& c) {
  const bool varCut = c.variant.censored > 0, refCut = c.reference.censored > 0;
  c.bound = varCut && refCut ? SamplesBound::Unknown
            : varCut         ? SamplesBound::AtLeast
            : refCut         ? SamplesBound::AtMost
                             : SamplesBound::Exact;
  if (c.bound == SamplesBound::Exact || !c.hasInterval()) return;
  if (c.bound != SamplesBound::AtMost) c.hi = kInf;
  if (c.bound != SamplesBound::AtLeast) c.lo = 0;
  const SamplesVerdict kept = c.bound == SamplesBound::AtLeast ? SamplesVerdict::More
                              : c.bound == SamplesBound::AtMost ? SamplesVerdict::Fewer
                                                                : SamplesVerdict::NoInterval;
  if (c.verdict != kept) c.verdict = SamplesVerdict::NoInterval;
}

std::string runsWord(int n) { return std::to_string(n) + (n == 1 ? " run" : " runs"); }

}  // namespace

ArmSamples summariseRuns(const std::vector<TargetRun>& runs, double resolution) {
  ArmSamples a;
  std::vector<double> values;
  for (const auto& r : runs) {
    if (!std::isfinite(r.samples) || !(r.samples > 0)) continue;
    values.push_back(r.samples);
    if (!r.reached) ++a.censored;
  }
  a.runs = static_cast<int>(values.size());
  a.samples = logEstimateOfRuns(values);
  if (a.runs < 2) return a;
  a.log_sd = a.samples.log_se * std::sqrt(double(a.runs));
  const double floorSd = resolution > 0 ? resolution / a.samples.value / std::sqrt(12.0) : 0;
  if (a.log_sd < floorSd) {
    a.log_sd = floorSd;
    a.samples.log_se = floorSd / std::sqrt(double(a.runs));
  }
  return a;
}

SamplesComparison compareSamples(const std::vector<TargetRun>& reference, const std::vector<TargetRun>& variant,
                                 const SamplesRule& rule) {
  SamplesComparison c;
  c.level = 1 - rule.alpha;
  c.min_effect = rule.min_effect;
  c.reference = summariseRuns(reference, rule.resolution);
  c.variant = summariseRuns(variant, rule.resolution);
  if (c.reference.runs == 0 || c.variant.runs == 0) {
    c.method = "no runs to compare (" + runsWord(c.reference.runs) + " of the reference, " +
               runsWord(c.variant.runs) + " of the variant)";
    return c;
  }
  c.ratio = c.variant.samples.value / c.reference.samples.value;
  borrowSpread(c.variant, c.reference);
  borrowSpread(c.reference, c.variant);
  const LogEstimate& r = c.reference.samples;
  const LogEstimate& v = c.variant.samples;
  c.method = "Welch t on ln samples, " + runsWord(c.reference.runs) + " of the reference and " +
             runsWord(c.variant.runs) + " of the variant, " + fmtFixed(c.level * 100, 0) + " % interval";
  if (!std::isfinite(r.log_se) || !std::isfinite(v.log_se)) {
    c.method = "1 run each: no interval";
    applyBound(c);
    return c;
  }
  const double vr = r.log_se * r.log_se, vv = v.log_se * v.log_se;
  c.log_se = std::sqrt(vr + vv);
  // A borrowed spread is the lender's own estimate: its degrees of freedom, not a second one's.
  c.df = c.variant.runs == 1 ? r.df : c.reference.runs == 1 ? v.df : satterthwaite(vr, r.df, vv, v.df);
  const Interval in = intervalOf(LogEstimate{c.ratio, c.log_se, c.df}, c.level);
  c.lo = in.lo;
  c.hi = in.hi;
  c.verdict = fromVerdict(verdictOf(c.ratio, c.lo, c.hi, c.min_effect));
  applyBound(c);
  return c;
}

std::string samplesVerdictWord(SamplesVerdict v) {
  switch (v) {
    case SamplesVerdict::More: return "more samples needed";
    case SamplesVerdict::Fewer: return "fewer samples needed";
    case SamplesVerdict::WithinNoise: return "samples within noise";
    case SamplesVerdict::NoInterval: break;
  }
  return "no interval";
}

std::string formatSamples(const SamplesComparison& c) {
  if (!std::isfinite(c.ratio)) return "–";
  const std::string ratio = fmtSpeedup(c.ratio) + " the samples";
  if (!c.hasInterval()) return ratio + " (1 run each: no interval)";
  if (c.bound == SamplesBound::Exact)
    return ratio + " [" + fmtEdge(c.lo) + ", " + fmtEdge(c.hi) + "]: " + samplesVerdictWord(c.verdict);
  const int cut = c.variant.censored + c.reference.censored;
  const std::string why = " (" + std::to_string(cut) + " of " + std::to_string(c.variant.runs + c.reference.runs) +
                          " runs stopped at the cap before the target)";
  if (c.bound == SamplesBound::AtLeast)
    return "at least " + ratio + " [≥ " + fmtEdge(c.lo) + "]" + why + ": " + samplesVerdictWord(c.verdict);
  if (c.bound == SamplesBound::AtMost)
    return "at most " + ratio + " [≤ " + fmtEdge(c.hi) + "]" + why + ": " + samplesVerdictWord(c.verdict);
  return ratio + why + ": " + samplesVerdictWord(c.verdict);
}

double seedSpread(const std::vector<TargetRun>& runs) {
  std::vector<TargetRun> reached;
  for (const auto& r : runs)
    if (r.reached) reached.push_back(r);
  return summariseRuns(reached).log_sd;
}

int runsToDetect(double spread, double change, double power, int variantRuns, double alpha) {
  const double effect = std::fabs(std::log1p(change));
  if (!std::isfinite(spread) || !(spread >= 0) || !(effect > 0) || !(power > 0 && power < 1)) return 0;
  auto tPower = [](double p, double df) { return p > 0.5 ? tQuantileReal(p, df) : p < 0.5 ? -tQuantileReal(1 - p, df) : 0.0; };
  auto enough = [&](int n) {
    const int nv = variantRuns > 0 ? variantRuns : n;
    const double vr = 1.0 / n, vv = 1.0 / nv;
    const double df = nv < 2 ? n - 1.0 : satterthwaite(vr, n - 1.0, vv, nv - 1.0);
    const double se = spread * std::sqrt(vr + vv);
    return effect >= (tQuantileReal(1 - alpha / 2, df) + tPower(power, df)) * se;
  };
  if (!enough(kMostReferenceRuns)) return 0;
  int lo = 2, hi = kMostReferenceRuns;  // enough() grows with n: bisect for the first n that is
  if (enough(lo)) return lo;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (enough(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace wb::stats
