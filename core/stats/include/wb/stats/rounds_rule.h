#pragma once
// The segments' rule, one home for the probe (wb/probe/segments.h) and its simulation
// (composed_sim.h): rounds of one baseline and one variant segment in one process, judged after
// each round at the look their number makes (roundsNoise, roundsRateSpeedup at looks.at(rounds)),
// until the verdict is clear: at least kSegmentMinRounds, at most kSegmentMaxRounds.
//
// Which arm goes first in a round is a coin flip, not a strict alternation. A host whose load comes
// and goes in a period near two rounds' (a loop of 2 s on, 2 s off against 1 s rounds, recorded
// here) meets the same arm at the same phase round after round under alternation, and an A/A
// experiment on that recorded trace was called faster or slower 50 % of the time; with the order
// drawn at random the periodic load becomes noise the rounds' spread carries (4 %; 2 % with the
// rounds not slowed alike set aside, below; bench_composed --trace). A linear drift averages out
// either way as the order is balanced on average.
#include <random>
#include <vector>

#include "wb/stats/stats.h"

namespace wb::stats {

inline constexpr int kSegmentMinRounds = 3;
inline constexpr int kSegmentMaxRounds = 8;

// The estimate after the rounds so far, judged at their look in `looks` (max_pairs: the rounds'
// cap); its noise is the rounds' own.
SpeedupEstimate judgeRounds(const std::vector<double>& baselineRates, const std::vector<double>& variantRates,
                            const Sequential& looks, RoundsNoise* noise = nullptr);

// The least rounds of a change's throughput: `minRounds` (kSegmentMinRounds) when it keeps the math,
// where the throughput is the answer and the rounds stop once it is clear; all of them (`maxRounds`)
// when it changes it. Then the throughput is one part of a time to target whose samples the
// variant's runs measure, and the composed verdict is judged at the α the throughput's own look
// spent (time_to_target.h's throughput_alpha): rounds settled at the third (α 0.1 %) left a lever
// 1.3× faster to the target by its throughput a 41 % chance to be kept at a 10 % seed spread, all
// eight 84 %, with fewer of the variant's runs on average (bench_composed's power table). Eight
// rounds cost seconds against the runs' minutes. The short trials of a change one process cannot
// switch take all their pairs the same way (throughput_trials.h).
int leastRounds(bool keepsMath, int minRounds, int maxRounds);

// Whether the rounds may stop: at least `minRounds` and a clear verdict (verdictIsClear).
bool roundsSettled(int rounds, int minRounds, const SpeedupEstimate& estimate);

// For a question that is only "faster?" (the ladder's): whether the rounds may stop because the
// last of looks.max_pairs rounds could no longer call it faster (stats.h chanceOfFaster), after at
// least `minRounds`. Stopping only withholds a "faster": the false alarms stay within the spending.
// `noise`: the rounds' (judgeRounds), whose df the interval was drawn with.
// Never while the estimate is no measurement (notMeasuredWhy; an evaluation's weighed by `share`,
// its evaluations' share of the run, as the time to target sees it): projected from an interval of
// 0.03-30× the chance of "faster" is as small as it is meaningless, and the step was left with that
// interval; the rounds go on until it is one. Except when looks.min_effect is infinite (an
// evaluation too small a share of the run for any speedup of it to count, evaluationMinEffect):
// then no interval could show it faster, and the least rounds are all it takes.
bool roundsCannotBeFaster(int rounds, int minRounds, const SpeedupEstimate& estimate, const RoundsNoise& noise,
                          const Sequential& looks, double share = 1);

// The evaluation speedup (as an effect: 0.39 for 1.39×) that makes the time to target `minEffect`
// faster when evaluations take `share` of it: a speedup s of that share makes the whole
// 1 / (1 − share + share / s) faster. Infinity when no evaluation speedup can (share at most
// minEffect / (1 + minEffect)); minEffect itself when the evaluations are all of it (share ≥ 1).
// What an evaluation lever's rounds judge "cannot be faster" against, for a question that is the
// time to target's (a 1.08× faster evaluation that is 7 % of the run is not a faster run).
double evaluationMinEffect(double minEffect, double share);

// Whether the next round times the variant first: a fair coin from `rng`.
bool variantFirst(std::mt19937_64& rng);

// Whether a round counts: neither segment was contended (the other processes' CPU over it below
// kContendedOtherCores) or both were slowed alike (their other loads within that of each other),
// as a pair of whole runs counts. A round that does not count is set aside (its ratio is the
// load's, not the lever's) and another round is run in its place, up to kSegmentMaxRounds more;
// with fewer than two rounds counted there is no verdict (contended). A square-wave load of period
// two rounds was called 16 % of the time with the coin alone, under 5 % with this.
// `resolution`: how far the two readings together may be off (the segments' CpuShare::
// resolution_cores summed): a load is only taken as contended, or as different, beyond it, so
// segments too short for the kernel's CPU accounting to resolve are not set aside for its ticks.
bool roundCounts(double otherFirst, double otherSecond, double resolution = 0);

}  // namespace wb::stats
