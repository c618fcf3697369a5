#pragma once
// The speedup ladder's plan and record (LibTorch-free, Qt-free: the window reads them): a
// baseline with every speedup off, then the speedups added one at a time in the recipe's order
// (workers → pin memory → devices → precision → early stopping → sharding → inference-mode
// eval), optionally each one alone against the baseline. Greedy (the default): each step is
// measured against the configuration kept so far and kept only when it is clearly faster and
// still reaches the target; the last row, "kept", is that configuration against the baseline.
// Cumulative (--cumulative): each step builds on the one before, measured against the baseline. This header plans the
// steps (from `workbench-cli capabilities --json`), summarises their paired runs into rows with
// intervals and verdicts (wb/stats/stats.h), and writes and reads ladder.json and the tables.
// Running the plan is wb/ladder/ladder_run.h (each step as pairs against the baseline through
// wb/experiment/paired_runner.h). Values only.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/speedups.h"
#include "wb/advice/workers_advice.h"
#include "wb/report/report.h"
#include "wb/stats/stats.h"

namespace wb::ladder {

struct LadderStep {
  std::string key;         // "baseline", a speedup's key (speedupTable()), or "kept" (greedy: the
                           // configuration kept, against the baseline)
  std::string added;       // what this step changes, for people: "loader workers 0 → 2"
  bool isolated = false;   // true: this speedup alone on the baseline (--isolated)
  bool skipped = false;    // this machine cannot do it: `note` says why
  std::string note;        // the skip reason, or a caveat about the step
  Config config;           // what to run (the baseline's config for a skipped step)
  // Folder-name stem: "00-baseline", "03-devices", "alone-devices".
  std::string slug(int index) const;
};

// The user's config with every speedup off (each descriptor's `off`: workers 0, 1 device, 32-true ...).
Config ladderBaseline(const Config& user);

// The plan. `capabilities` is the JSON of `workbench-cli capabilities --json` (cores, cuda,
// gpus, speedups.<name>.available/note/max, speedups.precision.values.<p>.available/note).
// Cumulative, in the table's order, each speedup at its descriptor's value on this machine (wb::Here:
// the stored worker probe's count when `capabilities` carries it as speedups.workers.probe, see
// wb/advice/workers_advice.h, else the rule of thumb; the GPUs, else 2 CPU processes; 16-mixed on
// CUDA, else bf16-mixed). A step the machine cannot do (not available, emulated, or its descriptor's
// cannotHelp) is kept with skipped = true and the reason; later steps build on the last one that ran.
// With `isolated`, each runnable speedup also runs alone on the baseline (sharding alone brings
// the devices it needs).
std::vector<LadderStep> planLadder(const Config& user, const nlohmann::json& capabilities, bool isolated);
// What this machine offers the speedups, as planLadder reads it from `capabilities` (with the
// stored worker probe attached).
Here ladderHere(const nlohmann::json& capabilities);

// `ladder --lr-scaling linear|sqrt`: every step of the plan that runs on more than one device
// (the devices step, the cumulative steps after it, devices or sharding alone) trains with
// optim.lr_scaling = `mode`, so they compare with the one-device baseline at equal accuracy
// (the global batch grows with the devices; the lr grows with it, after a short warm-up). Their
// `added` says so; "none" trains them at optim.lr. Error (InvalidConfig) names --lr-scaling and
// the allowed values. The CLI passes the config's own optim.lr_scaling when the option is
// not given, so the plan says what the steps will do.
Status applyLadderLrScaling(std::vector<LadderStep>& plan, const std::string& mode);
// The rule the steps on more than one device use when --lr-scaling is not given: the config's
// own when it scales, else linear for SGD (and Adadelta) and sqrt for Adam/AdamW, so the devices
// step is compared at equal accuracy (its global batch is `devices` times the baseline's).
std::string defaultLadderLrScaling(const OptimConfig& optim);
// Why, in words, for the plan's note: "linear lr scaling (sgd: Goyal et al. 2017, …)".
std::string lrScalingWhy(const std::string& mode, const OptimConfig& optim);

// What the machine's checks refuse for a config (the trainer's: e.g. fp16 without CUDA); the
// CLI passes wb::train::machineConfigErrors, so this folder needs no LibTorch.
using MachineCheck = std::function<std::vector<FieldError>(const Config&)>;

struct PlanOptions {
  bool isolated = false;       // also each speedup alone on the baseline
  std::string lr_scaling;      // "" = the config's optim.lr_scaling
  std::string steps;           // --steps "workers,precision": only these besides the baseline
};
// The plan for this machine: planLadder, applyLadderLrScaling, every step the config checks
// (validate and `check`) refuse marked skipped with the reason, then --steps. Error
// (InvalidConfig) names --lr-scaling or the unknown --steps key, with the known ones.
Result<std::vector<LadderStep>> planForMachine(const Config& user, const nlohmann::json& capabilities,
                                               const PlanOptions& options, const MachineCheck& check);

// The runs of one step, as loaded after their pairs ended. For a step run as pairs against the
// baseline, references[i] is the baseline run paired with runs[i] (the pair's order alternates);
// the baseline step holds every baseline run and no references. Runs of a pair that did not
// finish are in neither.
struct LadderStepRuns {
  LadderStep step;
  std::vector<records::RunRecord> runs;
  std::vector<records::RunRecord> references;  // aligned with runs; empty: unpaired (compared by groups)
  std::vector<bool> counted;          // aligned with runs: the pair counts (both ok, not contended)
  std::vector<std::string> failures;  // runs that could not start, with the reason
  std::string settled;                // why no more pairs ran ("clear", "max pairs", "budget", ...)
  bool not_run = false;               // the ladder was cancelled before this step ran
  std::string decision;               // greedy: "kept: …", "dropped: …" (why) or "not measured: contended…"; "" otherwise
  // Measured by parts instead of pairs (wb/experiment/composed_try.h): its try.json; null: pairs.
  nlohmann::json by_parts;
};

// The key of a greedy ladder's last step: the configuration it kept, against the baseline.
inline constexpr const char* kKeptStep = "kept";

// A step's speedups with their intervals and verdicts: over the baseline from its pairs
// (to_target is the headline; throughput: training steps only; wall: the training loop), and
// over the step before it from the two steps' runs (groups, no pairing).
struct LadderEstimates {
  stats::SpeedupEstimate to_target, throughput, wall, marginal_to_target;
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
  std::string problems;               // failed runs, start failures
  std::vector<std::string> run_dirs;
  LadderEstimates estimates;          // pairs = 0: none (the baseline, skipped or not run)
  std::string settled;                // why it stopped adding pairs
  bool not_run = false;               // cancelled before it ran
  std::string decision;               // greedy: kept or dropped, and why
  nlohmann::json unknown;             // read from a newer ladder.json: written back as it was
};

// A row from a step measured by parts: its estimates (to the target, throughput), the composed
// times and the split in words (the row's note) from the step's try.json.
void applyByParts(LadderRow& row, const nlohmann::json& tryDoc);

// A step the ladder did not reach before it was cancelled.
inline constexpr const char* kNotRunCancelled = "not run (cancelled)";

// What a ladder row's headline says: the speedup to the target, or why there is none.
struct LadderHeadline {
  std::optional<double> speedup;      // set only when valid (reached, not contended)
  std::string text;                   // "2.10× [1.80, 2.45] faster" | "1.03× [0.92, 1.15] within
                                      // noise" | "1.9× (1 run each: no interval)" | "not reached"
                                      // | "contended" | "skipped" | "not run (cancelled)" | "–"
  std::string detail;                 // "acc 62.8 %" (the accuracy it reached), or ""
  bool emphasise = false;             // a clear faster/slower verdict: the multiplier may be bold
  std::optional<double> lo, hi;       // the interval, when there is one
};
LadderHeadline ladderHeadline(const LadderRow& row);

struct Ladder {
  std::string answer;                 // the answer in one sentence (ladderAnswer): what every surface prints
  std::optional<double> target_acc;   // user-set, else the fair target of the baseline's repeats
                                      // (compare::fairTargetOf: their lowest best less its chance spread)
  bool target_user_set = false;
  bool target_from_references = false;  // a ladder by parts: its steps' target, the reference runs' own
  std::string target_note;            // how the target was chosen (FairTarget::describe)
  std::vector<LadderRow> rows;        // in plan order
  std::string status = "ok";          // ok | failed | cancelled | running
  std::string status_note;            // "cancelled at step devices"
  std::string cancelled_at;           // the step key, when cancelled
  double noise_band = 0;              // the measured band that steadied the spread of few pairs
  stats::Sequential verdicts;        // the looks and threshold the verdicts were judged by
  bool greedy = false;                // steps against the configuration kept so far (see above)
  nlohmann::json unknown;             // read from a newer ladder.json: written back as it was
};

// How the ladder ran and ended, for summarizeLadder.
struct LadderStatus {
  std::string status = "ok";
  std::string cancelled_at;
  bool greedy = false;
};

// A greedy ladder's "kept" row (the configuration it kept), or nullptr.
const LadderRow* keptRow(const Ladder& ladder);

// Medians, ranges and speedups. Cumulative speedup: baseline ÷ step from the step's pairs
// (median of per-pair ratios, with the interval and verdict); marginal: the previous cumulative
// step that ran ÷ this one, from their runs (isolated rows have none). A step's runs that were
// not counted (contended) are left out of its times.
Ladder summarizeLadder(const std::vector<LadderStepRuns>& steps, std::optional<double> target_acc,
                       const stats::Sequential& verdicts = {}, const LadderStatus& status = {});

// The ladder's answer in one sentence, from its record alone: what to turn on, by how much (with
// its interval), how sure and why ("Turn on channels-last: 1.10× faster to 71.4 % val acc (95 %:
// 1.04-1.17×); it keeps the training's math, so this is its throughput."), or, when nothing paid,
// why each step did not ("Nothing tried here made training faster: devices 2 cannot be faster here
// (at most 0.97×); loader workers 2 differs by less than 2 %."). summarizeLadder stores it in
// Ladder::answer (ladder.json "answer"); a ladder.json without one gets it when read.
std::string ladderAnswer(const Ladder& ladder);
// The short table `ladder` prints under the answer (within 100 columns with wrapping): step, what
// changed (by the speedups' labels), the decision, × to target with its interval.
render::Table ladderAnswerTable(const Ladder& ladder);

// Columns: step, what was added, pairs (and why no more ran), time to target, × to target (the
// headline with its interval and verdict: "2.10× [1.80, 2.45] faster"; "not reached · 62.8 %"
// for a step that did not reach it, "contended" for one measured under contention, "not run
// (cancelled)"), its 95 % low and high ends, step × to target, best val acc, train samples/s, ×
// samples/s, wall time, × wall (secondary, with their intervals), peak memory, note. The title
// carries a cancelled ladder's status ("cancelled at step devices").
render::Table ladderTable(const Ladder& ladder);
// The headline bars: cumulative speedup to the target accuracy with its interval as an error bar,
// its annotation bold only for a clear faster/slower (isolated rows left out; skipped, not
// reached, not run and contended steps drawn empty with their reason and accuracy). Without a target
// (the baseline has no evaluation) the wall-time speedup, titled so. As data (the GUI draws them
// with QCustomPlot) and as a drawing (SVG, and the PNG of `ladder`).
render::BarChartSpec ladderBars(const Ladder& ladder);
render::Drawing ladderChart(const Ladder& ladder);
nlohmann::json ladderJson(const Ladder& ladder);
// Reads back what ladderJson wrote; also accepts a whole ladder.json export ({"ladder": ...}).
// Error (InvalidConfig) names what is missing.
Result<Ladder> ladderFromJson(const nlohmann::json& doc);
// The answer a ladder.json holds as written: "" when it has none (an older file; ladderFromJson
// fills that one in by ladderAnswer) or is no ladder.
std::string storedLadderAnswer(const nlohmann::json& doc);
// Loads <dir>/ladder.json, or the file itself. Errors name the path.
Result<Ladder> loadLadder(const std::string& dir_or_file);
// The ladder table, the chart (file "ladder.svg"), accuracy curves of the cumulative steps,
// advice per step against the step before it (with each step's worker advice from `workers`:
// core/probe's storedWorkersAdvice; none given, the rule of thumb), and the machine (env.json of
// the baseline run).
report::Report buildLadderReport(const Ladder& ladder, const std::vector<LadderStepRuns>& steps,
                                 const advice::WorkersAdviceFor& workers = {});

}  // namespace wb::ladder
