#pragma once
// The speedup ladder: a baseline with every speedup off, then the speedups added one at a time,
// cumulatively, in the recipe's order (workers → pin memory → devices → precision → early
// stopping → sharding → inference-mode eval), optionally each one alone against the baseline.
// This header plans the steps (from `workbench-cli capabilities --json`) and summarises their
// runs; running them is the caller's job (app/cli/cmd_ladder.cpp through wb::launch). Values only.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/report/probe.h"
#include "wb/report/report.h"

namespace wb::report {

struct LadderStep {
  std::string key;         // "baseline" | "workers" | "pin_memory" | "devices" | "precision" |
                           // "early_stopping" | "sharding" | "inference_eval"
  std::string added;       // what this step changes, for people: "loader workers 0 → 2"
  bool isolated = false;   // true: this speedup alone on the baseline (--isolated)
  bool skipped = false;    // this machine cannot do it: `note` says why
  std::string note;        // the skip reason, or a caveat about the step
  Config config;           // what to run (the baseline's config for a skipped step)
  // Folder-name stem: "00-baseline", "03-devices", "alone-devices".
  std::string slug(int index) const;
};

// The user's config with every speedup off: workers 0, pin memory off, devices 1, precision
// 32-true, early stopping off (patience 0), sharding off, inference_eval false.
Config ladderBaseline(const Config& user);

// The plan. `capabilities` is the JSON of `workbench-cli capabilities --json` (cores, cuda,
// gpus, speedups.<name>.available/note/max, speedups.precision.values.<p>.available/note).
// Cumulative: workers = the stored worker probe's count when `capabilities` carries it as
// speedups.workers.probe (wb/report/probe.h attachProbe; 0 skips the step), else min(cores, 4)
// → pin memory → devices (GPU count on CUDA, else 2 CPU
// processes) → precision (16-mixed on CUDA, bf16-mixed on CPU) → early stopping (patience 2) →
// sharding (zero1, needs devices > 1) → inference-mode eval. A step the machine cannot do is
// kept with skipped = true and the reason; later steps build on the last one that ran.
// With `isolated`, each runnable speedup also runs alone on the baseline (sharding alone brings
// the devices it needs).
std::vector<LadderStep> planLadder(const Config& user, const nlohmann::json& capabilities, bool isolated);

// `ladder --lr-scaling linear|sqrt`: every step of the plan that runs on more than one device
// (the devices step, the cumulative steps after it, devices or sharding alone) trains with
// optim.lr_scaling = `mode`, so they compare with the one-device baseline at equal accuracy
// (the global batch grows with the devices; the lr grows with it, after a short warm-up). Their
// `added` says so; "none" trains them at optim.lr. Error (InvalidConfig) names --lr-scaling and
// the allowed values. The CLI passes the config's own optim.lr_scaling when the option is
// not given, so the plan says what the steps will do.
Status applyLadderLrScaling(std::vector<LadderStep>& plan, const std::string& mode);

// The runs of one step (repeats), as loaded after they ended.
struct LadderStepRuns {
  LadderStep step;
  std::vector<RunRecord> runs;
  std::vector<std::string> failures;  // runs that could not start, with the reason
};

struct LadderRow {
  LadderStep step;
  int repeats = 0;                    // runs that produced a record
  int reached = 0;                    // of those, how many reached the target
  std::optional<double> wall_s, wall_min, wall_max;        // median and range over repeats
  std::optional<double> target_s, target_min, target_max;  // over the repeats that reached
  // Speedups over the baseline. The headline is cumulative_target: the speedup at equal accuracy
  // (time to the target). The wall-time ones (cumulative, marginal) are secondary: a step that
  // trains faster but never reaches the target has no headline.
  std::optional<double> cumulative_target, marginal_target;  // on the time to target
  std::optional<double> cumulative, marginal;                // on wall time
  std::optional<double> val_acc;      // median best val acc
  std::optional<double> train_sps;    // median train samples/s (training steps only)
  std::optional<double> peak_mem;     // median peak memory (bytes)
  std::optional<double> gflop_per_s;  // median achieved GFLOP/s (summary "flops")
  std::optional<double> pct_of_peak;  // median % of the measured peak
  std::string mem_kind;               // "device" | "host"
  int contended = 0;                  // repeats measured under contention
  std::string contention;             // why this row's speedups are not valid ("" = they are):
                                      // its repeats', the baseline's or the step before's contention
  std::string problems;               // failed/cancelled runs, start failures
  std::vector<std::string> run_dirs;
};

// What a ladder row's headline says: the speedup to the target, or why there is none.
struct LadderHeadline {
  std::optional<double> speedup;      // set only when valid (reached, not contended)
  std::string text;                   // "2.10×" | "not reached" | "contended" | "skipped" | "–"
  std::string detail;                 // "acc 62.8 %" (the accuracy it reached), or ""
};
LadderHeadline ladderHeadline(const LadderRow& row);

struct Ladder {
  std::optional<double> target_acc;   // user-set, else the lowest best val acc over the baseline's
                                      // repeats (so every baseline repeat reaches it)
  bool target_user_set = false;
  std::vector<LadderRow> rows;        // in plan order
};

// Medians, ranges and speedups. Cumulative speedup: baseline ÷ step (median time to target;
// median wall time); marginal: the previous cumulative step that ran ÷ this one (isolated rows
// have none).
Ladder summarizeLadder(const std::vector<LadderStepRuns>& steps, std::optional<double> target_acc);

// Columns: step, what was added, time to target, × to target (the headline: "not reached ·
// 62.8 %" for a step that did not reach it, "contended" for one measured under contention), step
// × to target, best val acc, train samples/s, wall time, × wall and step × wall (secondary), peak
// memory, note.
Table ladderTable(const Ladder& ladder);
// The headline bars: cumulative speedup to the target accuracy (isolated rows left out; skipped,
// not reached and contended steps drawn empty with their reason and accuracy). Without a target
// (the baseline has no evaluation) the wall-time speedup, titled so. As data (the GUI draws them
// with QCustomPlot) and as a drawing (SVG, and the PNG of `ladder`).
BarChartSpec ladderBars(const Ladder& ladder);
Drawing ladderChart(const Ladder& ladder);
nlohmann::json ladderJson(const Ladder& ladder);
// Reads back what ladderJson wrote; also accepts a whole ladder.json export ({"ladder": ...}).
// Error (InvalidConfig) names what is missing.
Result<Ladder> ladderFromJson(const nlohmann::json& doc);
// Loads <dir>/ladder.json, or the file itself. Errors name the path.
Result<Ladder> loadLadder(const std::string& dir_or_file);
// The ladder table, the chart (file "ladder.svg"), accuracy curves of the cumulative steps,
// advice per step against the step before it (reading each step's stored worker probe among
// `probes`: loadProbesFor), and the machine (env.json of the baseline run).
Report buildLadderReport(const Ladder& ladder, const std::vector<LadderStepRuns>& steps,
                         const StoredProbes& probes = {});

}  // namespace wb::report
