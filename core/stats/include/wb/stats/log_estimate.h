#pragma once
// One measured quantity as the composition of time to target needs it: a positive value (a
// geometric mean or a ratio), the standard error of its logarithm and the degrees of freedom that
// standard error rests on. Log-normal because every part of a run's time (throughput, samples to
// target, start-up, an evaluation) scatters multiplicatively. Pure functions; Qt-free.
#include <limits>
#include <vector>

#include "wb/stats/stats.h"

namespace wb::stats {

inline constexpr double kExactDf = std::numeric_limits<double>::infinity();

struct LogEstimate {
  double value = std::numeric_limits<double>::quiet_NaN();  // > 0 (0 allowed for a part that is absent)
  double log_se = 0;                                       // 0: known exactly
  double df = kExactDf;                                    // what log_se rests on (∞: exact or a normal)
  bool known() const { return std::isfinite(value) && value >= 0; }
};

// A value taken as exact (a configured number, or a part that is the same in both arms).
inline LogEstimate exactly(double value) { return LogEstimate{value, 0, kExactDf}; }

// Repeats of one quantity (start-up seconds of several runs): their geometric mean, the sample sd
// of their logs over √n, n − 1 degrees of freedom. Values that are not finite and > 0 are dropped;
// one value: that value with an unknown spread (log_se NaN); none: NaN.
LogEstimate logEstimateOfRuns(const std::vector<double>& values);

// A speedup estimate of stats.h as a log estimate: the point, and the standard error that its
// interval implies, half its log width over t(1 − (1 − level)/2, df) (stats.h's intervals are
// symmetric on the log scale). df ≤ 0: the estimate's pairs − 1. No interval: log_se NaN.
LogEstimate logEstimateOf(const SpeedupEstimate& estimate, double df = 0);

// The two-sided interval of a log estimate at `level` (t quantile at floor(df), at least 1).
struct Interval {
  double lo = std::numeric_limits<double>::quiet_NaN();
  double hi = std::numeric_limits<double>::quiet_NaN();
};
Interval intervalOf(const LogEstimate& e, double level);

// t(p, df) for a real, possibly infinite df: floor(df) (conservative), the normal beyond 1000.
double tQuantileReal(double p, double df);

}  // namespace wb::stats
