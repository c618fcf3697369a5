#include "wb/stats/log_estimate.h"

#include <algorithm>
#include <cmath>

namespace wb::stats {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kLargestDf = 1000;  // t(0.975, 1000) = 1.962: a normal for every purpose here
}  // namespace

double tQuantileReal(double p, double df) {
  if (!(df >= 1)) return kNaN;
  const int whole = df >= kLargestDf ? kLargestDf : static_cast<int>(std::floor(df));
  return tQuantile(p, whole);
}

LogEstimate logEstimateOfRuns(const std::vector<double>& values) {
  std::vector<double> logs;
  for (double v : values)
    if (std::isfinite(v) && v > 0) logs.push_back(std::log(v));
  LogEstimate e;
  if (logs.empty()) return e;
  const double n = double(logs.size());
  double mean = 0;
  for (double x : logs) mean += x / n;
  e.value = std::exp(mean);
  if (logs.size() < 2) {
    e.log_se = kNaN;
    e.df = 0;
    return e;
  }
  double ss = 0;
  for (double x : logs) ss += (x - mean) * (x - mean);
  e.log_se = std::sqrt(ss / (n - 1)) / std::sqrt(n);
  e.df = n - 1;
  return e;
}

LogEstimate logEstimateOf(const SpeedupEstimate& s, double df) {
  LogEstimate e;
  e.value = s.point;
  e.df = df > 0 ? df : double(s.pairs - 1);
  if (!s.hasInterval() || !(s.lo > 0) || !(e.df >= 1)) {
    e.log_se = kNaN;
    return e;
  }
  const double t = tQuantileReal(1 - (1 - s.level) / 2, e.df);
  e.log_se = std::log(s.hi / s.lo) / (2 * t);
  return e;
}

Interval intervalOf(const LogEstimate& e, double level) {
  if (!(e.value > 0) || !std::isfinite(e.log_se)) return {};
  if (e.log_se == 0) return {e.value, e.value};
  const double half = tQuantileReal(1 - (1 - level) / 2, std::max(e.df, 1.0)) * e.log_se;
  return {e.value * std::exp(-half), e.value * std::exp(half)};
}

}  // namespace wb::stats
