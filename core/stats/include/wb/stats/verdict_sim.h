#pragma once
// How often the verdicts are wrong, measured: A/A and known-effect experiments simulated over
// recorded per-run values (a trace of one configuration run again and again as whole processes),
// each decided by exactly the rule and stopping an experiment of pairs uses (wb/stats/stats.h:
// pairedSpeedup at Sequential::at(n), a pair set aside when hostChangedOverPair flags its runs'
// kernel timings at the assumed check threshold, stop on verdictIsClear). The bench (tests/bench/
// bench_verdicts) prints the rates; tests hold the rule to them on the traces kept in tests/data.
//
// A simulated experiment takes a window of consecutive runs of the trace, pairs them in order (runs
// 2k and 2k + 1), and calls one run of each pair the variant at random (which run comes first is
// arbitrary for a repeat of one configuration). A trace long enough for every experiment's window
// gives each experiment its own runs (windows side by side); a shorter one is sampled at random
// starts (wrapping), so experiments share runs; a short recorded trace is best taken whole
// (kEveryWindow: every start and every choice of variants, an exact rate over that trace). A known
// effect is injected by making the variant's time per sample shorter by the factor (1 + effect).
// Pure functions of the trace and the seed; deterministic.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"
#include "wb/stats/stats.h"

namespace wb::stats {

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

// Plain noise: `runs` runs of 6.2 s at 16.5k samples/s, each off by a log-normal scatter of log sd
// `sd` (0.08: runs about 8 % apart), the kernel check at 2.57 ms ± 1 % (never flagged).
RunTrace noiseTrace(double sd, int runs, uint64_t seed);

// A host at one of two speeds for each whole run, flipping between one run and the next with
// probability flipP (0.4: 40 % of the time): the quiet trace's run-to-run scatter on a training
// throughput of fastRate or slowRate. The kernel check (± 1 % of its own noise) scales with the
// speed when checkSeesIt; else it stays put, as on the recorded 2-core host, whose single-threaded
// kernel never saw training's flips.
RunTrace flipTrace(const RunTrace& quiet, double fastRate, double slowRate, double flipP, int runs, uint64_t seed,
                   bool checkSeesIt = true);

struct SimOutcome {
  int experiments = 0;
  bool shared_runs = false;            // windows overlapped (a trace shorter than the experiments need)
  int faster = 0, slower = 0, within = 0, no_interval = 0;
  double mean_pairs = 0;               // pairs an experiment took before it stopped
  int set_aside = 0;                   // experiments whose final estimate set a pair aside
  double rate(int count) const { return experiments ? double(count) / experiments : 0.0; }
  double calledRate() const { return rate(faster + slower); }
};

// `experiments` experiments of the plan `seq` (adaptive up to max_pairs, or fixed_pairs) on the
// trace, the variant `effect` faster (0: A/A). kEveryWindow: every start and every choice of the
// pairs' variants once (seed unused). Plans of up to 31 pairs (none beyond: an empty outcome).
inline constexpr int kEveryWindow = 0;
SimOutcome simulateExperiments(const RunTrace& trace, double effect, const Sequential& seq, int experiments,
                               uint64_t seed);

// The smallest effect (a speedup factor − 1, searched on [0.005, 2]) that `seq` calls faster with
// probability ≥ power on the trace (experiments as above); NaN when even 2 (3×) is not.
double detectableEffect(const RunTrace& trace, const Sequential& seq, double power, int experiments, uint64_t seed);

}  // namespace wb::stats
