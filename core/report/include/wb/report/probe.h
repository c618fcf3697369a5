#pragma once
// The worker-count probe's result and rules (no LibTorch: the window and the advisor read them).
// The measuring is core/probe (wb/probe/workers.h, `workbench-cli probe workers`); this header
// holds what a result is, how the recommendation follows from its rows, where results are stored
// and how they are keyed, the table and the chart. It stays in core/report because the advisor
// and the comparison report read stored probes (a record in core/probe would make the two
// libraries depend on each other). Values only, except the load/save functions (files under
// probesDir()).
//
// Storage: one JSON file per machine and experiment, <probesDir()>/<key>.json, where key hashes
// the host name, CPU model and core count with the experiment's data section, model name and
// batch size. A probe of another experiment or machine never overwrites this one's.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/report/chart.h"
#include "wb/report/run_record.h"
#include "wb/report/table.h"

namespace wb::report {

// One candidate worker count timed on the real experiment (real loader + real steps).
struct ProbeRow {
  int workers = 0;
  int64_t steps = 0;            // training steps timed (after the warm-up)
  double seconds = 0;           // wall time of those steps
  double samples_per_s = 0;     // samples trained / seconds
  double data_ms = 0;           // per step: waiting for the loader's next batch
  double step_ms = 0;           // per step: everything else (copy, forward, backward, optimiser)
  double other_cores = 0;       // cores other processes used meanwhile (wb::cpuShareBetween)
};

// The recommendation rule: the smallest worker count whose samples/s is within `tolerance` (a
// fraction: 0.02 = 2 %) of the best row's. -1 for no rows.
inline constexpr double kProbeTolerance = 0.02;
int recommendWorkers(const std::vector<ProbeRow>& rows, double tolerance = kProbeTolerance);

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
  std::vector<ProbeRow> rows;   // (c) the candidates, in the order they ran
  int recommended = -1;         // recommendWorkers(rows)
  double seconds_per_candidate = 0;
  double total_s = 0;           // the whole probe, opening the data included

  // Loader alone per batch ÷ step alone (how much of a step workers could hide at most).
  double dataShare() const;
  bool dataNotBottleneck() const { return dataShare() <= kNotBottleneckShare; }
  // Other processes used >= wb::kContendedOtherCores during a phase: the figures are not this
  // experiment's alone (the verdict says so and asks for a rerun on a quiet machine).
  bool contended() const;
  double maxOtherCores() const;
  // One or two sentences: the recommendation, and whether the data path is the bottleneck.
  std::string verdict() const;
  const ProbeRow* row(int workers) const;
};

// What identifies a machine for stored results: host name, CPU model, logical cores.
struct MachineId {
  std::string host, cpu;
  int cores = 0;
};
MachineId thisMachine();

// The keyed fields of an experiment: its data section, model name and batch size.
nlohmann::json probeExperimentFields(const Config& config);
// 16 hex digits (FNV-1a 64 of the machine and the keyed fields, canonical JSON).
std::string probeKey(const Config& config, const MachineId& machine);

// $WB_PROBES_DIR, else "probes" beside the runs root (wb::defaultRunsRoot()'s parent folder:
// ~/.local/share/speedup-workbench/probes).
std::filesystem::path probesDir();

nlohmann::json probeJson(const ProbeResult& result);
Result<ProbeResult> probeFromJson(const nlohmann::json& doc);
// Writes <dir>/<result.key>.json atomically. Errors name the file.
Status saveProbe(const ProbeResult& result, const std::filesystem::path& dir = probesDir());
// The stored result for this experiment on this machine; nullopt when none (or unreadable).
std::optional<ProbeResult> loadProbe(const Config& config, const MachineId& machine = thisMachine(),
                                     const std::filesystem::path& dir = probesDir());

// Puts a stored result into a capabilities document as speedups.workers.probe ({recommended,
// date, measured_at, key, data_not_bottleneck}), where planLadder's workers step reads it.
// Nothing changes for nullopt.
void attachProbe(nlohmann::json& capabilities, const std::optional<ProbeResult>& result);

// Which loader worker count the workbench recommends, one home for the advisor's data-bound
// verdict and the ladder's workers step: the stored probe's measured count when there is one
// (a probe without candidates counts as none), else the rule of thumb min(cores, 4), at least 1.
inline constexpr int kRuleOfThumbMaxWorkers = 4;
int ruleOfThumbWorkers(int cores);
struct WorkersAdvice {
  int workers = 1;
  bool measured = false;             // from a stored probe (else the rule of thumb)
  std::string date;                  // the probe's probeDate(); "" without one
  bool contended = false;            // the probe was measured under contention
  bool data_not_bottleneck = false;  // the probe found the loader is not what a step waits for
  // "the worker probe of 2026-12-01 08:40 UTC" (", measured under contention" when it was), or
  // "the rule of thumb min(cores, 4)".
  std::string source() const;
};
WorkersAdvice workersAdvice(const ProbeResult* probe, int cores);
// The same from a capabilities document: its "cores" and speedups.workers.probe (attachProbe).
WorkersAdvice workersAdvice(const nlohmann::json& capabilities);

// The machine a run used (its start event's host, else env.json's); nullopt when neither says.
std::optional<MachineId> runMachine(const RunRecord& run);
// Stored probes by key: what a report's advisor reads for each run's experiment and machine.
using StoredProbes = std::map<std::string, ProbeResult>;
// The stored probe, when there is one, of each run's experiment on the machine it ran on.
StoredProbes loadProbesFor(const std::vector<const RunRecord*>& runs, const std::filesystem::path& dir = probesDir());
// The run's probe among `probes`; nullptr when none (or its config or machine is unknown).
const ProbeResult* probeFor(const StoredProbes& probes, const RunRecord& run);

// Columns: workers, samples/s, × vs 0 workers, data ms/step, step ms, steps timed; the
// recommended row marked; notes: the loader alone, the step alone, the verdict.
Table probeTable(const ProbeResult& result);
// Samples/s against workers: one bar per candidate from zero, × vs 0 workers and the
// recommendation above the bars, a dashed line at 0 workers' rate.
Drawing probeChart(const ProbeResult& result);

// "2026-12-01 08:40 UTC" from measured_at (or measured_at as is when it does not parse).
std::string probeDate(const ProbeResult& result);
// Now as UTC ISO 8601.
std::string utcNowIso();

}  // namespace wb::report
