#pragma once
// How often the verdicts are wrong, measured: A/A and known-effect experiments simulated over
// recorded per-run values (a trace of one configuration run again and again as whole processes),
// each decided by exactly the rule and stopping an experiment of pairs uses (wb/report/stats.h:
// pairedSpeedup at Sequential::at(n), stop on verdictIsClear). The bench (tests/bench/
// bench_verdicts) prints the rates; tests hold the rule to them on the traces kept in tests/data.
//
// A simulated experiment takes a window of consecutive runs of the trace (a random start, wrapping
// at the end), pairs them in order (runs 2k and 2k + 1), and calls one run of each pair the variant
// at random (which run comes first is arbitrary for a repeat of one configuration). A known effect
// is injected by making the variant's time per sample shorter by the factor (1 + effect). Pure
// functions of the trace and the seed; deterministic.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"
#include "wb/report/stats.h"

namespace wb::report {

struct TraceRun {
  double t_s = 0;                      // when the run started, seconds from the trace's start
  double train_samples_per_s = 0;      // the metric simulated (training throughput)
  double run_wall_s = 0;               // the whole process
  double kernel_before_ms = 0, kernel_after_ms = 0;  // the host speed check (0: none)
};

struct RunTrace {
  std::string source;                  // "recorded: 24 runs of fashion-mnist-lenet on <host>", "built: ..."
  std::vector<TraceRun> runs;          // in the order they ran
};

nlohmann::json traceJson(const RunTrace& trace);
// A trace file written by traceJson (bench_noise --trace). Errors name the file and the field.
Result<RunTrace> loadTrace(const std::filesystem::path& file);

// A quiet host built from measured figures, for a machine whose recordings show two speeds:
// `runs` runs of runS seconds at `rate` samples/s, each off by a log-normal scatter whose 95 % band
// is `band` (bandOfLogSigma), the kernel at kernelMs.
RunTrace quietTrace(double rate, double band, double runS, double kernelMs, int runs, uint64_t seed,
                    const std::string& source);

// A host that flips between two speeds: the quiet trace's run-to-run scatter (each run's rate over
// the trace's median, drawn at random) on a host whose training throughput is fastRate or slowRate
// (samples/s) in stretches of at least minStretchS seconds (exponential beyond, mean 2 × minStretchS);
// a run that spans a flip gets the time-weighted mix; the kernel scales with the speed. Runs last
// the quiet trace's median wall time.
RunTrace twoSpeedTrace(const RunTrace& quiet, double fastRate, double slowRate, double minStretchS, int runs,
                       uint64_t seed);

struct SimOutcome {
  int experiments = 0;
  int faster = 0, slower = 0, within = 0, no_interval = 0;
  double mean_pairs = 0;               // pairs an experiment took before it stopped
  int set_aside = 0;                   // experiments whose final estimate set a pair aside
  double rate(int count) const { return experiments ? double(count) / experiments : 0.0; }
  double calledRate() const { return rate(faster + slower); }
};

// `experiments` experiments of the plan `seq` (adaptive up to max_pairs, or fixed_pairs) on the
// trace, the variant `effect` faster (0: A/A).
SimOutcome simulateExperiments(const RunTrace& trace, double effect, const Sequential& seq, int experiments,
                               uint64_t seed);

// The smallest effect (a speedup factor − 1, searched on [0.005, 2]) that `seq` calls faster with
// probability ≥ power on the trace; NaN when even 2 (3×) is not.
double detectableEffect(const RunTrace& trace, const Sequential& seq, double power, int experiments, uint64_t seed);

}  // namespace wb::report
