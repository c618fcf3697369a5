#include "wb/stats/rounds_rule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "wb/common/sysinfo.h"
#include "wb/stats/log_estimate.h"

namespace wb::stats {

SpeedupEstimate judgeRounds(const std::vector<double>& baselineRates, const std::vector<double>& variantRates,
                            const Sequential& looks, RoundsNoise* noise) {
  const RoundsNoise n = roundsNoise({baselineRates, variantRates});
  if (noise) *noise = n;
  return roundsRateSpeedup(baselineRates, variantRates, n, looks.at(static_cast<int>(baselineRates.size())));
}

int leastRounds(bool keepsMath, int minRounds, int maxRounds) { return keepsMath ? minRounds : std::max(minRounds, maxRounds); }

bool roundsSettled(int rounds, int minRounds, const SpeedupEstimate& estimate) {
  return rounds >= minRounds && verdictIsClear(estimate);
}

namespace {

// The estimate as the time to target sees it when it is `share` of the run (an evaluation's).
SpeedupEstimate weighed(SpeedupEstimate e, double share) {
  if (!(share < 1) || !(share > 0)) return e;
  const auto onTheRun = [share](double x) { return x > 0 ? 1 / (1 - share + share / x) : x; };
  e.point = onTheRun(e.point), e.lo = onTheRun(e.lo), e.hi = onTheRun(e.hi);
  return e;
}

}  // namespace

bool roundsCannotBeFaster(int rounds, int minRounds, const SpeedupEstimate& estimate, const RoundsNoise& noise,
                          const Sequential& looks, double share) {
  if (rounds < minRounds || rounds >= looks.max_pairs || verdictIsClear(estimate) || noise.df < 1) return false;
  if (std::isinf(looks.min_effect)) return true;  // no speedup of that share could: nothing to measure
  if (!notMeasuredWhy(weighed(estimate, share)).empty()) return false;
  const LogEstimate e = logEstimateOf(estimate, noise.df);
  return chanceOfFaster(estimate.point, e.log_se, rounds, looks.max_pairs, looks.at(looks.max_pairs).alpha,
                        looks.min_effect) < kFutilityChance;
}

double evaluationMinEffect(double minEffect, double share) {
  if (!(share < 1)) return minEffect;
  const double room = share - minEffect / (1 + minEffect);  // share / s must fall below this
  if (!(room > 0)) return std::numeric_limits<double>::infinity();
  return share / room - 1;
}

bool variantFirst(std::mt19937_64& rng) { return std::bernoulli_distribution(0.5)(rng); }

bool roundCounts(double otherFirst, double otherSecond, double resolution) {
  const double margin = std::max(0.0, resolution);
  const bool either = isContended(std::max(otherFirst, otherSecond) - margin);
  return !either || std::fabs(otherFirst - otherSecond) < kContendedOtherCores + margin;
}

}  // namespace wb::stats
