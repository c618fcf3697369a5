#pragma once
// The variant's runs to the target, looked at as they finish: a try by parts whose change alters
// the training's math runs the variant to the target from the references' seeds one run at a time,
// and after each from the second composes the time to target (time_to_target.h) at that look's
// share of the false-alarm rate: the spending the pairs use (stats.h Sequential, over `max_runs`).
// It stops at the first look that settles the question:
//   - clear: faster or slower (the run-time saved is what the remaining runs would have cost);
//   - negligible: the whole interval lies within the practical threshold, so no change worth
//     having is left to find;
//   - a bound that is slower: the variant's runs were cut at the cap and even the bound is below
//     1 − the threshold (at most 0.6×: it cannot be faster);
//   - with `futility` (the ladder's and the search's question, "is it faster?", not the try's
//     "how much?"): it can no longer be shown faster. The chance that the last look calls it
//     faster (stats.h chanceOfFaster) is below kFutilityChance; the spread is projected to shrink
//     as if every part's did with the
//     runs (the reference runs' and the throughput's do not), so the chance is overstated and the
//     rule stops late rather than early. This look is taken from the first run on (its spread
//     the reference runs', borrowed: convergence.h), judged at the first look's rule. Stopping
//     only ever withholds a "faster"; what it costs in power, and the false alarms, the simulation
//     measures (bench_composed's looks table).
// else it goes on to `max_runs`. One home for the try (wb/experiment/composed_try.h) and the
// simulation that measures its false alarms and power (composed_sim.h).
#include <string>

#include "wb/stats/stats.h"
#include "wb/stats/time_to_target.h"

namespace wb::stats {

inline constexpr int kMinVariantRuns = 2;  // the first look: a spread needs two runs

enum class LookStop { Continue, Clear, Negligible, SlowerBound, CannotBeFaster, AllRuns };

struct VariantLooks {
  int max_runs = 5;
  double min_effect = kDefaultMinEffect;
  bool futility = false;  // also stop once it can no longer be shown faster
  // The rule the composed verdict is judged at after `runs` of the variant's runs (one: as two).
  VerdictRule ruleAt(int runs) const;
  // Whether the runs stop after `runs`, given the composition judged at ruleAt(runs).
  LookStop stopAfter(int runs, const TimeToTargetEstimate& e) const;
};

// "clear" | "negligible" | "slower bound" | "cannot be faster" | "all runs" | "" (Continue), for try.json.
std::string lookStopName(LookStop s);

}  // namespace wb::stats
