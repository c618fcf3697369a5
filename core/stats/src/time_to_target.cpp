#include "wb/stats/time_to_target.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "wb/common/format.h"

namespace wb::stats {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kStep = 1e-5;  // central differences on the log scale

// The independent parts, in this order.
enum Part { kStartB, kStartV, kRateB, kThroughput, kSamplesB, kSamplesV, kEvalB, kEvalSpeed, kParts };
using Values = std::array<double, kParts>;

std::array<LogEstimate, kParts> partsOf(const TimeToTargetParts& p) {
  LogEstimate variantSamples = p.math_kept ? exactly(p.baseline_samples.value) : p.variant_samples;
  return {p.baseline_startup_s, p.variant_startup_s, p.baseline_train_samples_per_s, p.throughput,
          p.baseline_samples,   variantSamples,      p.baseline_eval_s,              p.eval_speed};
}

struct Times {
  double baseline = kNaN, variant = kNaN;
};

// The formula of the header, for both arms.
Times compose(const Values& x, const TimeToTargetParts& p) {
  const double samplesV = p.math_kept ? x[kSamplesB] : x[kSamplesV];
  auto evaluations = [&](double samples) {
    return p.samples_per_evaluation > 0 ? samples / p.samples_per_evaluation : p.evaluations;
  };
  const double rateV = x[kRateB] * x[kThroughput];
  Times t;
  t.baseline = x[kStartB] + x[kSamplesB] / x[kRateB] + evaluations(x[kSamplesB]) * x[kEvalB];
  t.variant = (p.startup_shared ? x[kStartB] : x[kStartV]) + samplesV / rateV + evaluations(samplesV) * x[kEvalB] / x[kEvalSpeed];
  return t;
}

double logSpeedup(const Values& x, const TimeToTargetParts& p) {
  const Times t = compose(x, p);
  return std::log(t.baseline / t.variant);
}

// Variance of ln speedup by the delta method, and its Welch-Satterthwaite degrees of freedom.
struct Spread {
  double log_se = kNaN, df = 0;
};
Spread deltaSpread(const std::array<LogEstimate, kParts>& parts, const Values& x, const TimeToTargetParts& p) {
  double var = 0, den = 0;
  for (int k = 0; k < kParts; ++k) {
    const LogEstimate& e = parts[k];
    if (e.log_se == 0 || x[k] == 0 || (k == kSamplesV && p.math_kept) || (k == kStartV && p.startup_shared)) continue;
    if (!std::isfinite(e.log_se)) return {};
    Values up = x, down = x;
    up[k] *= std::exp(kStep);
    down[k] *= std::exp(-kStep);
    const double grad = (logSpeedup(up, p) - logSpeedup(down, p)) / (2 * kStep);
    const double v = grad * grad * e.log_se * e.log_se;
    var += v;
    if (std::isfinite(e.df)) den += e.df >= 1 ? v * v / e.df : kInf;
  }
  Spread s;
  s.log_se = std::sqrt(var);
  s.df = den > 0 ? var * var / den : kExactDf;
  return s;
}

// Censored samples to target bound the speedup the other way (see the header).
void applyBound(TimeToTargetEstimate& e, SamplesBound samples) {
  e.bound = samples == SamplesBound::AtLeast  ? SamplesBound::AtMost
            : samples == SamplesBound::AtMost ? SamplesBound::AtLeast
                                              : samples;
  SpeedupEstimate& s = e.speedup;
  if (e.bound == SamplesBound::Exact || !s.hasInterval()) return;
  if (e.bound != SamplesBound::AtLeast) s.lo = 0;
  if (e.bound != SamplesBound::AtMost) s.hi = kInf;
  const Verdict kept = e.bound == SamplesBound::AtMost   ? Verdict::Slower
                       : e.bound == SamplesBound::AtLeast ? Verdict::Faster
                                                          : Verdict::NoInterval;
  if (s.verdict != kept) s.verdict = Verdict::NoInterval;
}

PartInterval partInterval(const std::string& name, const LogEstimate& e, double level) {
  const Interval in = intervalOf(e, level);
  return {name, e.value, in.lo, in.hi};
}

std::vector<PartInterval> partIntervals(const TimeToTargetParts& p, double level) {
  std::vector<PartInterval> out{partInterval("throughput", p.throughput, level)};
  LogEstimate samples = exactly(1);
  if (!p.math_kept) {
    const LogEstimate &b = p.baseline_samples, &v = p.variant_samples;
    const double vb = b.log_se * b.log_se, vv = v.log_se * v.log_se;
    const double den = (std::isfinite(b.df) ? vb * vb / b.df : 0) + (std::isfinite(v.df) ? vv * vv / v.df : 0);
    samples = {b.value / v.value, std::sqrt(vb + vv), den > 0 ? (vb + vv) * (vb + vv) / den : kExactDf};
  }
  out.push_back(partInterval("samples to target", samples, level));
  if (p.baseline_eval_s.value > 0) out.push_back(partInterval("evaluation", p.eval_speed, level));
  if (p.startup_shared) {
    out.push_back(partInterval("start-up (both)", p.baseline_startup_s, level));
    return out;
  }
  out.push_back(partInterval("start-up (baseline)", p.baseline_startup_s, level));
  out.push_back(partInterval("start-up (variant)", p.variant_startup_s, level));
  return out;
}

}  // namespace

void TimeToTargetParts::setSamples(const SamplesComparison& c) {
  baseline_samples = c.reference.samples;
  variant_samples = c.variant.samples;
  math_kept = false;
  samples_verdict = c.verdict;
  samples_bound = c.bound;
}

void TimeToTargetParts::keepMath(const LogEstimate& baselineSamples) {
  baseline_samples = baselineSamples;
  variant_samples = baselineSamples;
  math_kept = true;
  samples_verdict = SamplesVerdict::WithinNoise;
  samples_bound = SamplesBound::Exact;
}

TimeToTargetEstimate composeTimeToTarget(const TimeToTargetParts& p, const VerdictRule& given) {
  VerdictRule rule = given;
  if (p.throughput_alpha > 0 && p.throughput_alpha < rule.alpha) rule.alpha = p.throughput_alpha;
  TimeToTargetEstimate e;
  const auto parts = partsOf(p);
  Values x;
  for (int k = 0; k < kParts; ++k) x[k] = parts[k].value;
  e.math_kept = p.math_kept;
  e.samples_verdict = p.samples_verdict;
  e.throughput_factor = p.throughput.value;
  e.samples_factor = p.math_kept ? 1.0 : p.baseline_samples.value / p.variant_samples.value;
  e.speedup.min_effect = rule.min_effect;
  e.speedup.level = 1 - rule.alpha;
  const Times t = compose(x, p);
  e.baseline_s = t.baseline;
  e.variant_s = t.variant;
  if (!(t.baseline > 0) || !(t.variant > 0) || !std::isfinite(t.baseline) || !std::isfinite(t.variant)) {
    e.speedup.method = "time to target: a part is missing or not positive";
    return e;
  }
  e.speedup.point = t.baseline / t.variant;
  e.parts = partIntervals(p, e.speedup.level);
  const Spread s = deltaSpread(parts, x, p);
  e.log_se = s.log_se;
  e.df = s.df;
  const Interval in = intervalOf(LogEstimate{e.speedup.point, s.log_se, s.df}, e.speedup.level);
  e.speedup.lo = in.lo;
  e.speedup.hi = in.hi;
  e.speedup.verdict = verdictOf(e.speedup.point, in.lo, in.hi, rule.min_effect);
  e.speedup.method = "time to target composed from its parts: delta method on the log scale, " +
                     fmtFixed(e.speedup.level * 100, 0) + " % t interval (" +
                     (std::isfinite(s.df) ? fmtFixed(s.df, 1) + " df" : std::string("exact parts")) + ")";
  if (!std::isfinite(s.log_se)) e.speedup.method = "time to target: a part has no spread (one run): no interval";
  applyBound(e, p.samples_bound);
  return e;
}

Interval bootstrapSpeedup(const TimeToTargetParts& p, double level, int draws, uint64_t seed) {
  const auto parts = partsOf(p);
  Values x;
  for (int k = 0; k < kParts; ++k) x[k] = parts[k].value;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> logs;
  logs.reserve(std::max(draws, 0));
  for (int d = 0; d < draws; ++d) {
    Values y = x;
    for (int k = 0; k < kParts; ++k) {
      const LogEstimate& e = parts[k];
      if (!(e.log_se > 0) || (k == kSamplesV && p.math_kept) || (k == kStartV && p.startup_shared)) continue;
      double z = normal(rng);
      if (std::isfinite(e.df)) z = std::student_t_distribution<double>(std::max(e.df, 1.0))(rng);
      y[k] *= std::exp(e.log_se * z);
    }
    logs.push_back(logSpeedup(y, p));
  }
  if (logs.empty()) return {};
  std::sort(logs.begin(), logs.end());
  auto at = [&](double q) {
    const double pos = q * double(logs.size() - 1);
    const size_t i = static_cast<size_t>(pos);
    const double f = pos - double(i);
    return std::exp(i + 1 < logs.size() ? logs[i] * (1 - f) + logs[i + 1] * f : logs[i]);
  };
  return {at((1 - level) / 2), at(1 - (1 - level) / 2)};
}

std::string timeToTargetWords(const TimeToTargetEstimate& e) {
  if (!std::isfinite(e.speedup.point)) return "–";
  const std::string x = fmtSpeedup(e.speedup.point);
  const std::string bound = e.bound == SamplesBound::AtMost ? "at most " : e.bound == SamplesBound::AtLeast ? "at least " : "";
  std::string head;
  switch (e.speedup.verdict) {
    case Verdict::Faster: head = bound + x + " faster to target"; break;
    case Verdict::Slower: head = bound + x + " slower to target"; break;
    case Verdict::WithinNoise: head = x + " to target, within noise"; break;
    case Verdict::NoInterval: head = bound + x + " to target (no verdict)"; break;
  }
  std::string split = fmtSpeedup(e.throughput_factor) + " throughput, ";
  if (e.math_kept && e.bound == SamplesBound::AtMost)
    split += "samples to target at least the baseline's (a bound)";
  else if (e.math_kept)
    split += "same samples to target (keeps the math)";
  else {  // runs cut before the target: their samples, and so the factor, only bounded
    const bool cut = e.bound != SamplesBound::Exact;
    const std::string why = cut && e.samples_verdict == SamplesVerdict::NoInterval ? "a bound: runs cut before the target"
                                                                                 : samplesVerdictWord(e.samples_verdict);
    split += (cut ? bound : "") + fmtSpeedup(e.samples_factor) + " samples to target (" + why + ")";
  }
  for (const auto& part : e.parts)
    if (part.name == "evaluation" && std::fabs(part.point - 1) > 1e-12) split += ", " + fmtSpeedup(part.point) + " evaluation";
  return head + ": " + split;
}

}  // namespace wb::stats
