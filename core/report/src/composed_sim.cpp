#include "wb/report/composed_sim.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "wb/report/convergence.h"
#include "wb/report/time_to_target.h"

namespace wb::report {

namespace {

// The rate over `n` consecutive points of a trace from `at` (samples over time: each point one
// equal share of samples at its rate).
double traceRate(const std::vector<double>& trace, size_t at, int n) {
  double seconds = 0;
  for (int i = 0; i < n; ++i) seconds += 1.0 / trace[(at + size_t(i)) % trace.size()];
  return double(n) / seconds;
}

// The throughput part on a recorded trace: consecutive segments from a random start, the arms'
// order alternating by round.
SpeedupEstimate throughputOnTrace(const ComposedModel& m, std::mt19937_64& rng) {
  const std::vector<double>& trace = *m.trace;
  const int k = std::max(1, m.trace_points_per_segment);
  size_t at = std::uniform_int_distribution<size_t>(0, trace.size() - 1)(rng);
  std::vector<double> base, var;
  for (int r = 0; r < m.rounds; ++r) {
    const double first = traceRate(trace, at, k), second = traceRate(trace, at + size_t(k), k);
    at += size_t(2 * k);
    const bool variantFirst = r % 2 == 1;
    base.push_back(variantFirst ? second : first);
    var.push_back((variantFirst ? first : second) * (1 + m.throughput_effect));
  }
  VerdictRule rule;
  rule.min_effect = m.min_effect;
  return pairedRateSpeedup(base, var, rule);
}

// The throughput part: rounds of one baseline and one variant segment sharing the round's level.
SpeedupEstimate throughputOf(const ComposedModel& m, std::mt19937_64& rng) {
  if (m.trace && m.trace->size() > 1) return throughputOnTrace(m, rng);
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

void count(ComposedOutcome& o, Verdict v) {
  ++o.experiments;
  switch (v) {
    case Verdict::Faster: ++o.faster; break;
    case Verdict::Slower: ++o.slower; break;
    case Verdict::WithinNoise: ++o.within; break;
    case Verdict::NoInterval: ++o.no_interval; break;
  }
}

}  // namespace

ComposedOutcome simulateComposed(const ComposedModel& m, int experiments, uint64_t seed) {
  std::mt19937_64 rng(seed);
  ComposedOutcome o;
  VerdictRule rule;
  rule.min_effect = m.min_effect;
  for (int i = 0; i < experiments; ++i) {
    count(o, composeTimeToTarget(partsOf(m, rng), rule).speedup.verdict);
  }
  return o;
}

ComposedOutcome simulateWholeRunPairs(const ComposedModel& m, int pairs, int pointsPerRun, int experiments, uint64_t seed) {
  ComposedOutcome o;
  if (!m.trace || m.trace->size() < 2) return o;
  const std::vector<double>& trace = *m.trace;
  std::mt19937_64 rng(seed);
  VerdictRule rule;
  rule.min_effect = m.min_effect;
  const int n = std::max(1, pointsPerRun);
  const double samples = m.samples;  // one run's training samples, split evenly over its points
  for (int e = 0; e < experiments; ++e) {
    size_t at = std::uniform_int_distribution<size_t>(0, trace.size() - 1)(rng);
    std::vector<double> base, var;
    for (int p = 0; p < pairs; ++p) {
      const double first = samples / traceRate(trace, at, n), second = samples / traceRate(trace, at + size_t(n), n);
      at += size_t(2 * n);
      const bool variantFirst = p % 2 == 1;
      base.push_back(m.startup_s + (variantFirst ? second : first));
      var.push_back(m.startup_s + (variantFirst ? first : second) / (1 + m.throughput_effect));
    }
    count(o, pairedSpeedup(base, var, rule).verdict);
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
