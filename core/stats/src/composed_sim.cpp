#include "wb/stats/composed_sim.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "wb/common/sysinfo.h"
#include "wb/stats/convergence.h"
#include "wb/stats/rounds_rule.h"
#include "wb/stats/time_to_target.h"
#include "wb/stats/variant_looks.h"

namespace wb::stats {

namespace {

// The rate over `n` consecutive points of a trace from `at` (samples over time: each point one
// equal share of samples at its rate).
double traceRate(const std::vector<double>& trace, size_t at, int n) {
  double seconds = 0;
  for (int i = 0; i < n; ++i) seconds += 1.0 / trace[(at + size_t(i)) % trace.size()];
  return double(n) / seconds;
}

// The other processes' mean CPU over `n` points from `at` (0 when the trace has none).
double traceOther(const ComposedModel& m, size_t at, int n) {
  if (!m.trace_other_cores || m.trace_other_cores->size() != m.trace->size()) return 0;
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += (*m.trace_other_cores)[(at + size_t(i)) % m.trace->size()];
  return sum / n;
}

// One round's two segments: the baseline's rate, the variant's and the other load over each (in
// time order).
struct Round {
  double base = 0, var = 0, other_first = 0, other_second = 0;
};

// The segments as the probe runs them (rounds_rule.h): rounds until the verdict is clear, each
// round's order a coin (m.alternate: the old strict alternation), a round whose segments were not
// slowed alike set aside and replaced; *contended when fewer than two rounds counted.
template <class Next>
SpeedupEstimate roundsAsTheProbe(const ComposedModel& m, std::mt19937_64& rng, Next next, bool* contended) {
  Sequential looks;
  looks.max_pairs = std::max(2, m.rounds);
  looks.min_effect = m.min_effect;
  std::vector<double> base, var;
  SpeedupEstimate e;
  int setAside = 0;
  const int least = m.rounds_until_clear ? kSegmentMinRounds : leastRounds(m.variant_runs <= 0, kSegmentMinRounds, looks.max_pairs);
  for (int r = 0; int(base.size()) < looks.max_pairs && r < looks.max_pairs + kSegmentMaxRounds; ++r) {
    const Round x = next(m.alternate ? r % 2 == 1 : variantFirst(rng));
    if (!roundCounts(x.other_first, x.other_second)) {
      ++setAside;
      continue;
    }
    base.push_back(x.base), var.push_back(x.var);
    RoundsNoise noise;
    e = judgeRounds(base, var, looks, &noise);
    if (roundsSettled(int(base.size()), least, e)) break;
    if (m.futility && m.variant_runs <= 0 && roundsCannotBeFaster(int(base.size()), kSegmentMinRounds, e, noise, looks)) break;
  }
  if (contended) *contended = base.size() < 2 && setAside > 0;
  return e;
}

// The throughput part: on a recorded trace, consecutive segments from a random start; else
// Gaussian noise around a level each round shares. `effect`: the variant's true rate × (1 + it).
SpeedupEstimate segmentsOf(const ComposedModel& m, double effect, std::mt19937_64& rng, bool* contended) {
  if (m.trace && m.trace->size() > 1) {
    const int k = std::max(1, m.trace_points_per_segment);
    size_t at = std::uniform_int_distribution<size_t>(0, m.trace->size() - 1)(rng);
    return roundsAsTheProbe(m, rng, [&](bool variantFirst) {
      const double first = traceRate(*m.trace, at, k), second = traceRate(*m.trace, at + size_t(k), k);
      Round x{variantFirst ? second : first, (variantFirst ? first : second) * (1 + effect), traceOther(m, at, k),
              traceOther(m, at + size_t(k), k)};
      at += size_t(2 * k);
      return x;
    }, contended);
  }
  std::normal_distribution<double> noise(0, m.host_noise), level(0, 0.10);
  return roundsAsTheProbe(m, rng, [&](bool) {
    const double round = level(rng);  // the host's speed this round: both arms share it
    return Round{m.rate * std::exp(round + noise(rng)), m.rate * (1 + effect) * std::exp(round + noise(rng)), 0, 0};
  }, contended);
}

SpeedupEstimate throughputOf(const ComposedModel& m, std::mt19937_64& rng, bool* contended) {
  return segmentsOf(m, m.throughput_effect, rng, contended);
}

// The evaluation part, timed after the training's rounds: its fewest rounds, to the end.
SpeedupEstimate evaluationOf(const ComposedModel& m, std::mt19937_64& rng, bool* contended) {
  ComposedModel e = m;
  e.rounds = std::max(2, m.eval_rounds);
  e.futility = false;
  bool evalContended = false;
  const SpeedupEstimate est = segmentsOf(e, m.eval_effect, rng, &evalContended);
  if (contended) *contended = *contended || evalContended;
  return est;
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

// One experiment's parts and the rule its verdict is judged at: the variant's runs one at a time,
// looked at as the product looks (variant_looks.h), when the math changes.
struct Experiment {
  TimeToTargetParts parts;
  VerdictRule rule;
  int variant_runs = 0;
  int rounds = 0;  // the segments' counted rounds
};

Experiment experimentOf(const ComposedModel& m, std::mt19937_64& rng, bool* contended) {
  Experiment x;
  TimeToTargetParts& p = x.parts;
  p.baseline_startup_s = startupOf(m, rng);
  p.variant_startup_s = startupOf(m, rng);
  p.baseline_train_samples_per_s = exactly(m.rate);
  const SpeedupEstimate throughput = throughputOf(m, rng, contended);
  x.rounds = throughput.pairs;
  p.throughput = logEstimateOf(throughput);
  p.throughput_alpha = 1 - throughput.level;
  p.baseline_eval_s = exactly(m.eval_s);
  if (m.eval_rounds > 0) p.eval_speed = logEstimateOf(evaluationOf(m, rng, contended));
  p.samples_per_evaluation = m.samples_per_evaluation;
  x.rule.min_effect = m.min_effect;
  const auto reference = runsOf(m.reference_runs, m.samples, m.seed_spread, rng);
  if (m.variant_runs <= 0) {
    p.keepMath(summariseRuns(reference).samples);
    return x;
  }
  SamplesRule rule;
  rule.min_effect = m.min_effect;
  const VariantLooks looks{m.variant_runs, m.min_effect, m.futility};
  std::vector<TargetRun> variant;
  for (int k = 1; k <= m.variant_runs; ++k) {
    variant.push_back(runsOf(1, m.samples * (1 + m.samples_effect), m.seed_spread, rng).front());
    if (k < kMinVariantRuns && k < m.variant_runs && !m.futility) continue;
    p.setSamples(compareSamples(reference, variant, rule));
    x.rule = m.fixed_variant_runs ? x.rule : looks.ruleAt(k);
    x.variant_runs = k;
    if (m.fixed_variant_runs) continue;
    if (looks.stopAfter(k, composeTimeToTarget(p, x.rule)) != LookStop::Continue) break;
  }
  return x;
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
  for (int i = 0; i < experiments; ++i) {
    bool contended = false;
    const Experiment x = experimentOf(m, rng, &contended);
    const Verdict v = composeTimeToTarget(x.parts, x.rule).speedup.verdict;
    o.variant_runs += x.variant_runs;
    o.rounds += x.rounds;
    if (contended) ++o.experiments, ++o.contended;
    else count(o, v);
  }
  return o;
}

ComposedOutcome simulateWholeRunPairs(const ComposedModel& m, int pairs, int pointsPerRun, int experiments, uint64_t seed) {
  ComposedOutcome o;
  if (!m.trace || m.trace->size() < 2) return o;
  const std::vector<double>& trace = *m.trace;
  std::mt19937_64 rng(seed);
  Sequential fixed;  // the runner's fixed pairs: one look spending all of its α
  fixed.fixed_pairs = pairs;
  fixed.min_effect = m.min_effect;
  const VerdictRule rule = fixed.at(pairs);
  const int n = std::max(1, pointsPerRun);
  const double samples = m.samples;  // one run's training samples, split evenly over its points
  for (int e = 0; e < experiments; ++e) {
    size_t at = std::uniform_int_distribution<size_t>(0, trace.size() - 1)(rng);
    std::vector<double> base, var;
    for (int p = 0; p < pairs; ++p) {
      const double first = samples / traceRate(trace, at, n), second = samples / traceRate(trace, at + size_t(n), n);
      const double otherFirst = traceOther(m, at, n), otherSecond = traceOther(m, at + size_t(n), n);
      at += size_t(2 * n);
      // The runner's rule: a pair counts when neither run was contended or both were slowed alike.
      if ((isContended(otherFirst) || isContended(otherSecond)) && std::fabs(otherFirst - otherSecond) >= kContendedOtherCores)
        continue;
      const bool variantFirst = p % 2 == 1;
      base.push_back(m.startup_s + (variantFirst ? second : first));
      var.push_back(m.startup_s + (variantFirst ? first : second) / (1 + m.throughput_effect));
    }
    if (base.empty()) ++o.experiments, ++o.contended;
    else count(o, pairedSpeedup(base, var, rule).verdict);
  }
  return o;
}

double trueSpeedup(const ComposedModel& m) {
  TimeToTargetParts p;
  p.baseline_startup_s = p.variant_startup_s = exactly(m.startup_s);
  p.baseline_train_samples_per_s = exactly(m.rate);
  p.throughput = exactly(1 + m.throughput_effect);
  p.baseline_eval_s = exactly(m.eval_s);
  if (m.eval_rounds > 0) p.eval_speed = exactly(1 + m.eval_effect);
  p.samples_per_evaluation = m.samples_per_evaluation;
  p.keepMath(exactly(m.samples));
  if (m.variant_runs > 0) {
    p.math_kept = false;
    p.variant_samples = exactly(m.samples * (1 + m.samples_effect));
  }
  return composeTimeToTarget(p).speedup.point;
}

ComposedModel leverToTarget(ComposedModel m, double speedup, bool byThroughput) {
  double& effect = byThroughput ? m.throughput_effect : m.samples_effect;
  double lo = byThroughput ? -0.9 : -0.95, hi = byThroughput ? 20.0 : 20.0;  // faster as the throughput rises, the samples fall
  for (int i = 0; i < 80; ++i) {
    effect = (lo + hi) / 2;
    const bool tooFast = trueSpeedup(m) > speedup;
    ((tooFast == byThroughput) ? hi : lo) = effect;
  }
  effect = (lo + hi) / 2;
  return m;
}

}  // namespace wb::stats
