#pragma once
// How often the composed time-to-target verdict (wb/stats/time_to_target.h) is wrong, measured
// by simulation: experiments whose throughput comes from interleaved rounds of segments in one
// process as the probe runs them (rounds_rule.h: each round times the baseline and the variant
// once, in an order a coin decides, until the verdict is clear; a segment's log rate scatters with
// sd `host_noise` around its round's level, which both arms share) and whose samples to target
// come from reference runs and the variant's runs (ln samples scatter with sd `seed_spread`),
// each decided exactly as the product decides: judgeRounds over the rounds at each look, compareSamples (convergence.h), composeTimeToTarget, the variant's runs looked at as they finish (variant_looks.h). Start-up and evaluations are
// measured from the reference runs too (their own scatter). Pure functions of the model and the
// seed; deterministic.
#include <cstdint>
#include <vector>

#include "wb/stats/rounds_rule.h"
#include "wb/stats/stats.h"

namespace wb::stats {

struct ComposedModel {
  double host_noise = 0.05;       // sd of one segment's log rate (1-20 %)
  int rounds = kSegmentMaxRounds; // at most this many interleaved rounds, until the verdict is clear
  bool alternate = false;         // the arms' order alternating by round (the probe's old way), not a coin
  bool rounds_until_clear = false; // the rounds stop once clear even when the math changes (the rule
                                   // before rounds_rule.h's leastRounds), for the bench's comparison
  double seed_spread = 0.05;      // sd of ln samples to target over seeds (2-15 %)
  int reference_runs = 5;         // the baseline's runs to the target
  int variant_runs = 5;           // the variant's at most; 0: the lever keeps the math (no runs)
  bool fixed_variant_runs = false; // all of them, one look (before the looks of variant_looks.h)
  bool futility = false;          // the looks also stop once it cannot be shown faster (the ladder's), and
                                  // the rounds too when the math is kept (the throughput is the answer)
  double throughput_effect = 0;   // the variant's true train rate is × (1 + this)
  double samples_effect = 0;      // the variant's true samples to target are × (1 + this)
  double rate = 10000;            // the baseline's train samples/s
  double samples = 600000;        // the baseline's true samples to target (geometric mean)
  double samples_per_evaluation = 60000;
  double eval_s = 0.5;            // one evaluation
  int eval_rounds = 0;            // > 0: the evaluation is timed too, by this many rounds of evaluation
                                  // segments (a training lever that acts there: probe segments
                                  // --evaluation-after), with the throughput's noise; 0: unchanged
  double eval_effect = 0;         // the variant's true evaluation rate is × (1 + this)
  double startup_s = 3;           // process start to the first step
  double startup_noise = 0.10;    // sd of a run's log start-up
  double min_effect = kDefaultMinEffect;
  // A recorded trace of this host's training rate (samples/s over consecutive log intervals of a
  // real run, in time order): set, the segments' host noise is the trace's instead of Gaussian.
  // Each experiment starts at a random point of it; a segment is `trace_points_per_segment`
  // consecutive points (the rate over them), the rounds follow one another in time, so drift,
  // bursts and a two-speed host are as recorded.
  const std::vector<double>* trace = nullptr;
  int trace_points_per_segment = 10;
  // The other processes' CPU over each point of the trace (cores; aligned with trace), when
  // recorded: the product's contention rule then applies as it does to real measurements (a round
  // of segments, like a pair of whole runs, counts only when neither was contended or both were
  // slowed alike: rounds_rule.h's roundCounts).
  const std::vector<double>* trace_other_cores = nullptr;
};

struct ComposedOutcome {
  int experiments = 0;
  int faster = 0, slower = 0, within = 0, no_interval = 0;
  int contended = 0;  // no verdict: the contention rule withheld it (counted in none of the others)
  long variant_runs = 0;  // the variant's runs to the target, over all experiments
  long rounds = 0;        // the segments' counted rounds, over all experiments
  double rate(int count) const { return experiments ? double(count) / experiments : 0.0; }
  double calledRate() const { return rate(faster + slower); }
  double meanVariantRuns() const { return experiments ? double(variant_runs) / experiments : 0.0; }
  double meanRounds() const { return experiments ? double(rounds) / experiments : 0.0; }
};

ComposedOutcome simulateComposed(const ComposedModel& model, int experiments, uint64_t seed);

// The speedup to target the model's effects amount to (the composition at the true parts).
double trueSpeedup(const ComposedModel& model);

// `model` with a lever `speedup` times faster to the target (its composition at the true parts):
// by its throughput (samples to target unchanged) or by its samples to target (throughput unchanged).
ComposedModel leverToTarget(ComposedModel model, double speedup, bool byThroughput);

// The reference method on the same trace, for a change that keeps the math: `pairs` interleaved
// pairs of whole runs (baseline first in odd pairs, the variant in even ones, as the runner), each
// run `points_per_run` consecutive points of model.trace (its time: the samples of each point over
// its rate, the variant's rate × (1 + throughput_effect), plus start-up), decided by pairedSpeedup
// at one look. Needs model.trace.
ComposedOutcome simulateWholeRunPairs(const ComposedModel& model, int pairs, int points_per_run, int experiments,
                                      uint64_t seed);

}  // namespace wb::stats
