#include "wb/report/composed_sim.h"

#include <cmath>
#include <random>
#include <vector>

#include "wb/report/convergence.h"
#include "wb/report/time_to_target.h"

namespace wb::report {

namespace {

// The throughput part: rounds of one baseline and one variant segment sharing the round's level.
SpeedupEstimate throughputOf(const ComposedModel& m, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0, m.host_noise), level(0, 0.10);
  std::vector<double> base, var;
  for (int r = 0; r < m.rounds; ++r) {
    const double round = level(rng);  // the host's speed this round: both arms share it
    base.push_back(m.rate * std::exp(round + noise(rng)));
    var.push_back(m.rate * (1 + m.throughput_effect) * std::exp(round + noise(rng)));
  }
  VerdictRule rule;
  rule.min_effect = m.min_effect;
  return pairedRateSpeedup(base, var, rule);
}

std::vector<TargetRun> runsOf(int n, double samples, double spread, std::mt19937_64& rng) {
  std::normal_distribution<double> seed(0, spread);
  std::vector<TargetRun> runs;
  for (int i = 0; i < n; ++i) runs.push_back({samples * std::exp(seed(rng)), true, uint64_t(i)});
  return runs;
}

LogEstimate startupOf(const ComposedModel& m, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0, m.startup_noise);
  std::vector<double> s;
  for (int i = 0; i < m.reference_runs; ++i) s.push_back(m.startup_s * std::exp(noise(rng)));
  return logEstimateOfRuns(s);
}

TimeToTargetParts partsOf(const ComposedModel& m, std::mt19937_64& rng) {
  TimeToTargetParts p;
  p.baseline_startup_s = startupOf(m, rng);
  p.variant_startup_s = startupOf(m, rng);
  p.baseline_train_samples_per_s = exactly(m.rate);
  p.throughput = logEstimateOf(throughputOf(m, rng));
  p.baseline_eval_s = exactly(m.eval_s);
  p.samples_per_evaluation = m.samples_per_evaluation;
  const auto reference = runsOf(m.reference_runs, m.samples, m.seed_spread, rng);
  if (m.variant_runs <= 0) {
    p.keepMath(summariseRuns(reference).samples);
    return p;
  }
  const auto variant = runsOf(m.variant_runs, m.samples * (1 + m.samples_effect), m.seed_spread, rng);
  SamplesRule rule;
  rule.min_effect = m.min_effect;
  p.setSamples(compareSamples(reference, variant, rule));
  return p;
}

}  // namespace

ComposedOutcome simulateComposed(const ComposedModel& m, int experiments, uint64_t seed) {
  std::mt19937_64 rng(seed);
  ComposedOutcome o;
  VerdictRule rule;
  rule.min_effect = m.min_effect;
  for (int i = 0; i < experiments; ++i) {
    const TimeToTargetEstimate e = composeTimeToTarget(partsOf(m, rng), rule);
    ++o.experiments;
    switch (e.speedup.verdict) {
      case Verdict::Faster: ++o.faster; break;
      case Verdict::Slower: ++o.slower; break;
      case Verdict::WithinNoise: ++o.within; break;
      case Verdict::NoInterval: ++o.no_interval; break;
    }
  }
  return o;
}

double trueSpeedup(const ComposedModel& m) {
  TimeToTargetParts p;
  p.baseline_startup_s = p.variant_startup_s = exactly(m.startup_s);
  p.baseline_train_samples_per_s = exactly(m.rate);
  p.throughput = exactly(1 + m.throughput_effect);
  p.baseline_eval_s = exactly(m.eval_s);
  p.samples_per_evaluation = m.samples_per_evaluation;
  p.keepMath(exactly(m.samples));
  if (m.variant_runs > 0) {
    p.math_kept = false;
    p.variant_samples = exactly(m.samples * (1 + m.samples_effect));
  }
  return composeTimeToTarget(p).speedup.point;
}

}  // namespace wb::report
