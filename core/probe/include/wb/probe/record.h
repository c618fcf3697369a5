#pragma once
// The worker-count probe's record (no LibTorch: the window reads it): what a result is, how the
// recommendation and each count's speedup follow from its rounds, where results are stored and
// how they are keyed, the summary the advisor and the ladder read (advice::WorkersAdvice), the
// table and the chart. The measuring is wb/probe/workers.h (`workbench-cli probe workers`).
//
// Statistics. Each candidate runs once a round, the rounds interleaved (0 1 2 4, 0 1 2 4, …), so a
// change in the machine's speed falls on every count. The noise of a stretch is measured from
// the rounds themselves (stats::roundsNoise: the two-way residual of the log rates), and the
// probe's noise band is that noise's band, at least kProbeMinBand. Each count's speedup against
// 0 workers, and against the fastest count, is the median per-round ratio with a 95 % t interval
// (stats::roundsRateSpeedup). The recommendation is the smallest count the fastest one is not
// clearly faster than: more workers are recommended only for a gain larger than the noise.
//
// Storage: one JSON file per machine and experiment, <probesDir()>/<key>.json, where key hashes
// the host name, CPU model and core count with the experiment's data section, model name and
// batch size. A probe of another experiment or machine never overwrites this one's. Results
// stored before the rounds were kept (no "rounds" per candidate) load with their stored
// recommendation and no intervals.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/render/chart.h"
#include "wb/records/host.h"
#include "wb/records/run_record.h"
#include "wb/stats/stats.h"
#include "wb/render/table.h"
#include "wb/advice/workers_advice.h"

namespace wb::probe {

// One candidate worker count timed on the real experiment (real loader + real steps), its rounds
// added up.
struct ProbeRow {
  int workers = 0;
  int64_t steps = 0;            // training steps timed (after the warm-ups)
  double seconds = 0;           // wall time of those steps
  double samples_per_s = 0;     // samples trained / seconds
  double data_ms = 0;           // per step: waiting for the loader's next batch
  double step_ms = 0;           // per step: everything else (copy, forward, backward, optimiser)
  double other_cores = 0;       // cores other processes used meanwhile (wb::cpuShareBetween)
  std::vector<double> round_rates;  // samples/s of each round, in order
};

// The smallest noise band the probe judges against (a fraction: 0.02 = ±2 %), however quiet its
// rounds were: stretches of a few seconds cannot promise more.
inline constexpr double kProbeMinBand = 0.02;

// The loader is "not the bottleneck" when one batch from the loader alone takes at most this
// share of one training step alone: workers can then save at most that share of a step.
inline constexpr double kNotBottleneckShare = 0.10;

struct ProbeResult {
  std::string key;              // probeKey() of the machine and experiment
  std::string measured_at;      // UTC, ISO 8601 ("2026-12-01T08:40:12Z")
  std::string host, cpu;
  int cores = 0;
  std::string device;           // "cpu" | "cuda:0"
  nlohmann::json experiment;    // the keyed fields (data, model, batch_size) and precision, threads
  // (a) the loader alone, 0 workers (real dataset and transforms, no model)
  double loader_batches_per_s = 0, loader_samples_per_s = 0;
  // (b) the training step alone on one cached batch (no loading)
  double step_alone_ms = 0, step_samples_per_s = 0;
  double alone_other_cores = 0; // the most other processes used during (a) or (b)
  int batch_size = 0;
  std::vector<ProbeRow> rows;   // (c) the candidates, in the order each round ran them
  int rounds = 0;               // interleaved rounds run (0: a result stored before rounds were kept)
  int recommended = -1;         // recommendWorkers(*this) when measured
  double seconds_per_round = 0;  // each candidate's timed stretch in one round
  double total_s = 0;           // the whole probe, opening the data included
  nlohmann::json unknown;       // keys a newer writer added, kept on a rewrite

  // Loader alone per batch ÷ step alone (how much of a step workers could hide at most).
  double dataShare() const;
  bool dataNotBottleneck() const { return dataShare() <= kNotBottleneckShare; }
  // Other processes used >= wb::kContendedOtherCores during a phase: the figures are not this
  // experiment's alone (the verdict says so and asks for a rerun on a quiet machine).
  bool contended() const;
  double maxOtherCores() const;
  const ProbeRow* row(int workers) const;
  const ProbeRow* fastest() const;    // the row of the highest samples/s; null without rows
  const ProbeRow* reference() const;  // what every count is measured against: 0 workers, else the smallest count
  // The rounds' noise (stats::roundsNoise over every row's round_rates) and the band the
  // verdicts use: its band, at least kProbeMinBand; kProbeMinBand without rounds.
  stats::RoundsNoise noise() const;
  double noiseBand() const;
  // `row`'s samples/s against `baseline`'s over the rounds, with its interval and verdict.
  stats::SpeedupEstimate speedupOver(const ProbeRow& baseline, const ProbeRow& row) const;
  // Whether another round could still change the recommendation: the fastest row against some
  // other row is neither clearly faster nor clearly within noise (stats::verdictIsClear).
  bool settled() const;
  // One or two sentences: the recommendation with its interval, and whether the data path is the
  // bottleneck.
  std::string verdict() const;
};

// The smallest worker count the fastest row is not clearly faster than (its interval reaches
// into the band); without rounds, the smallest count within kProbeMinBand of the best. -1 for no
// rows.
int recommendWorkers(const ProbeResult& result);

// The keyed fields of an experiment: its data section, model name and batch size.
nlohmann::json probeExperimentFields(const Config& config);
// storeKey of the machine and the keyed fields.
std::string probeKey(const Config& config, const records::MachineId& machine);

nlohmann::json probeJson(const ProbeResult& result);
Result<ProbeResult> probeFromJson(const nlohmann::json& doc);
// Writes <dir>/<result.key>.json atomically. Errors name the file.
Status saveProbe(const ProbeResult& result, const std::filesystem::path& dir = records::probesDir());
// The stored result for this experiment on this machine; nullopt when none (or unreadable).
std::optional<ProbeResult> loadProbe(const Config& config, const records::MachineId& machine = records::thisMachine(),
                                     const std::filesystem::path& dir = records::probesDir());
// Stores the result in `dir` (saveProbe: <key>.json) with its plot beside it (<key>.svg, and
// <key>.png when rsvg-convert is installed). The files written, by kind ("json", "svg", "png");
// what could not be written goes to *problem.
nlohmann::json storeProbe(const ProbeResult& result, const std::filesystem::path& dir, std::string* problem);

// What the advisor and the ladder read of a probe: its recommendation, date, contention and
// bottleneck finding; the rule of thumb for `cores` without one (or without candidates).
advice::WorkersAdvice workersAdvice(const ProbeResult* probe, int cores);
// Puts a stored result's advice into a capabilities document (advice::attachWorkersAdvice).
// Nothing changes for nullopt.
void attachProbe(nlohmann::json& capabilities, const std::optional<ProbeResult>& result);
// The advice for each run from the probe stored in `dir` for its experiment on the machine it ran
// on (each probe read once); the rule of thumb where none is stored.
advice::WorkersAdviceFor storedWorkersAdvice(const std::filesystem::path& dir = records::probesDir());

// Columns: workers, samples/s, × vs 0 workers with its interval and verdict, data ms/step, step
// ms, steps timed, other load; the recommended row marked; notes: the loader alone, the step
// alone, the rounds and their noise, the verdict.
render::Table probeTable(const ProbeResult& result);
// Samples/s against workers: one bar per candidate from zero, × vs 0 workers and the
// recommendation above the bars, a dashed line at 0 workers' rate.
render::Drawing probeChart(const ProbeResult& result);

// "2026-12-01 08:40 UTC" from measured_at.
std::string probeDate(const ProbeResult& result);

}  // namespace wb::probe
