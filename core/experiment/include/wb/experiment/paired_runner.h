#pragma once
// The one runner of experiments of many runs (the ladder, `try`): a plan of configurations, each
// variant run as pairs against the reference, A B then B A (alternating, never all A's then all
// B's), every run a whole `workbench-cli` launch (wb::launch::launchRun) loaded back as a record.
// Pairs are added, in rounds over the variants not yet settled, until the variant's verdict is
// clear (wb::stats::verdictIsClear, each look spending its share of the 5 % false-alarm rate:
// stats::Sequential) or a cap is reached (pairs, time); with Policy::fixed_pairs, exactly that
// many. Why pairs: the host changes speed from one minute
// to the next, so two runs next to each other in time, their order alternated, compare better than
// medians of runs far apart (wb/stats/stats.h has the statistics).
//
// The folder (out) is the experiment's record and makes it resumable: out/pairs.json holds the
// plan and every finished pair, rewritten atomically after each; runs go to out/runs/<slug>-pN
// (the variant) and out/runs/<slug>-pN-<reference key> (its reference). A pair that did not
// finish (cancelled, SIGINT/SIGTERM) is not in pairs.json and gives no speedup; run again on the
// same folder, the runner reloads the finished pairs and continues, running a cut pair again in
// new folders (<slug>-pN-r2, ...): what a run wrote is never replaced. A folder of another plan
// is refused (Error naming the step that differs and what to do).
//
// Events (JSON Lines like a run's, rank -1; see wb/proto/event_types.h): rung_start and rung_end
// around every run, pair_end after every pair (its estimate so far). Thread affinity: runPairs
// blocks its caller; hooks are called on that thread.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/compare/compare.h"
#include "wb/records/noise.h"
#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/launch/launcher.h"
#include "wb/records/math_record.h"
#include "wb/records/run_record.h"
#include "wb/stats/stats.h"

namespace wb::experiment {

// Defaults of the caps (the CLI's --max-pairs, --budget-s).
inline constexpr int kDefaultMaxPairs = 5;
inline constexpr double kDefaultBudgetS = 600;   // per variant

// The user's own training script as every run of a plan: this template with the arm's settings
// (wb/launch/command_run.h), instead of a `workbench-cli run` of the arm's config.
struct UserCommand {
  std::string text;             // empty: the workbench's own runs
  double idle_timeout_s = 900;  // a run that writes nothing this long hangs: stopped, failed
  bool set() const { return !text.empty(); }
};

// One configuration of the plan.
struct Arm {
  std::string key;     // unique in the plan: "baseline", "workers", "variant"
  std::string label;   // what it changes, in words: "loader workers 0 → 2"
  std::string slug;    // run-folder stem: "01-workers"
  int index = 0;       // its place in the caller's plan (the events' index)
  Config config;
  // Set: this arm's runs are this instead of the plan's (an empty text: the workbench's own run),
  // e.g. the same training written in Lightning against the workbench's core.
  std::optional<UserCommand> command;
};

struct Plan {
  Arm reference;
  std::vector<Arm> variants;  // each compared with the reference; none: the reference runs once
  int steps = 0;              // the caller's plan length (the events' `steps`), skipped steps included
  UserCommand user_command;   // set: every run is the user's command, not a `workbench-cli run`
  // Each pair trains its own seed, both its runs the same one: pair N the seed of the experiment's
  // N-th reference run (pairSeed), so that the pairs' spread holds the seed's noise as well as the
  // host's, as the reference runs' does. Off: every run trains its config's seed.
  bool seed_per_pair = false;
  // What the arm's runs are: its own command when it has one, else the plan's.
  const UserCommand& commandOf(const Arm& arm) const { return arm.command ? *arm.command : user_command; }
};

struct Policy {
  int fixed_pairs = 0;        // > 0: exactly this many counted pairs per variant, no early stop
  int max_pairs = kDefaultMaxPairs;   // adaptive: at most this many counted pairs per variant
  double budget_s = kDefaultBudgetS;  // adaptive: no new pair once a variant's pairs took this long
  double min_effect = stats::kDefaultMinEffect;  // the practical threshold (--min-effect)
  double floor_band = 0;      // this host's measured band (hostFloorBand), 0 when unmeasured
  // Pairs measured under contention are not counted, and pairs the host speed check flagged are
  // set aside; at most this many more pairs per variant replace them.
  int rerun_contended = stats::kReplacedPairs;
  std::optional<double> target_acc;  // nullopt: the reference's fair target (referenceTarget)
  bool settle_on_throughput = false;  // adaptive: the training throughput's verdict settles a variant
                                      // (short trials cut at a step count), not the headline's
  // Adaptive: before max_pairs only a "slower" verdict settles a variant (settlesOnLook): for a
  // question that is only "faster?" whose answer a slower throughput gives by itself (a larger
  // global batch: composed_try.h's samplesNeverFewer), while a faster one takes every pair.
  bool settle_only_slower = false;
  // The looks the verdicts are judged at (the statistics of wb/stats/stats.h).
  stats::Sequential sequential() const { return {max_pairs, fixed_pairs, min_effect, floor_band, rerun_contended}; }
};

// One finished pair, as pairs.json keeps it.
struct PairRecord {
  std::string key;            // the variant's
  int number = 0;             // 1-based, per variant
  bool variant_first = false; // the order it ran in
  std::string reference_dir, variant_dir;
  int64_t seed = 0;           // the seed both its runs trained (Plan::seed_per_pair); 0: their configs'
};

// The seed pair `number` (1-based) trains when each pair has its own: the reference runs' scheme
// (kFirstReferenceSeed, + 1, ...), so pair N's baseline trains what reference run N trains.
uint64_t pairSeed(int number);

// What a variant's pairs measured: the speedup on time to the target accuracy (the headline,
// counted from the run's start), training throughput (training steps only) and wall time (the
// training loop: steps, evaluation, checkpoints), each from the pairs (pairedSpeedup).
struct PairEstimates {
  stats::SpeedupEstimate to_target, throughput, wall;
  bool reached = false;       // the variant reached the target in a counted pair
  // The headline the runner stops on: to_target when the target is known and reached, else wall.
  const stats::SpeedupEstimate& headline(bool haveTarget) const {
    return haveTarget && reached ? to_target : wall;
  }
};

struct VariantRuns {
  Arm arm;
  std::vector<PairRecord> pairs;                  // finished pairs, in order
  std::vector<records::RunRecord> references, variants;  // aligned with pairs
  std::vector<std::string> failures;              // runs that failed or could not start
  std::string settled;        // why no more pairs: "clear", "max pairs", "budget", "fixed", "failed", "" (running)
  double spent_s = 0;         // wall time of this variant's pairs
  // The i-th pair counts: both runs ended ok (or early-stopped), and neither was contended or
  // both were slowed alike (the same cores asked, the other load within kContendedOtherCores).
  bool counted(size_t i) const;
  int countedPairs() const;
  // The counted pairs an estimate rests on: less those the host speed check flagged (set aside,
  // wb/stats/stats.h). A pair set aside still spends its look, and is replaced as a contended one
  // is (Policy::rerun_contended).
  int usablePairs() const;
};

struct Outcome {
  std::vector<VariantRuns> variants;
  std::vector<records::RunRecord> lone_reference;  // the reference's run when the plan has no variants
  std::optional<double> target_acc;               // the policy's, else from the reference's runs
  bool cancelled = false;
  std::string cancelled_at;   // the variant whose pair was cut (or came next) when cancelled
  bool failed = false;        // a variant ended with a failed run
  bool resumed = false;       // finished pairs were reloaded from the folder
  int exitCode() const { return cancelled ? 130 : failed ? 1 : 0; }
};

// The estimates of one variant's counted pairs at `target` (nullopt: wall time only), judged at
// the look their number makes in `seq`.
PairEstimates estimatePairs(const VariantRuns& v, std::optional<double> target, const stats::Sequential& seq);

// Whether the estimate at a look settles its variant before the cap: a clear verdict
// (stats::verdictIsClear), and only "slower" under Policy::settle_only_slower.
bool settlesOnLook(const stats::SpeedupEstimate& e, const Policy& policy);
// The target accuracy the pairs are compared at: the policy's, else the fair target of every
// finished reference run (compare::fairTargetOf: their lowest best less its chance spread).
std::optional<compare::FairTarget> referenceFairTarget(const Outcome& o, std::optional<double> user);
std::optional<double> referenceTarget(const Outcome& o, std::optional<double> user);

struct Hooks;
// An experiment's result record (try.json, ladder.json) that cannot be read when it continues: kept
// aside and said on hooks.log (wb/proto/rundir.h keepUnreadableResult), as it is written again from
// what the folder measured. Io when it cannot be moved aside.
Status keepUnreadableResult(const std::filesystem::path& file, const Hooks& hooks);

struct Hooks {
  std::string cli_path;                          // workbench-cli for the ranks
  const std::atomic<bool>* stop = nullptr;       // set => no new run; the running one is stopped
                                                 // through launch::requestStop by the caller
  std::function<void(const nlohmann::json&)> on_event;
  std::function<void(const Outcome&)> on_pair;   // after each pair (rewrite outputs)
  std::FILE* log = stderr;                       // progress lines; nullptr for none
  std::string command;                           // the command line, kept in pairs.json for "continue with"
  // The math record of a change one process cannot check (more ranks, where the run ends), made
  // in this process without training: nullopt when the first steps can show it (a process trains
  // them). Unset: `probe math` says so in a process of its own. The CLI's is probe::mathNotCheckable.
  std::function<Result<std::optional<records::MathCheckRecord>>(const Config& baseline, const Config& variant)>
      unchecked_math;
  // When the experiment started (the command's start): progress lines say the time so far from it.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  bool stopRequested() const { return stop && stop->load(); }
  void emit(const nlohmann::json& ev) const {
    if (on_event) on_event(ev);
  }
};

// A progress line's time: " · 1 min 05 s so far", and ", about 3 min left" when `done` of `total`
// parts are done (0 < done < total), the rest taken to cost what the done ones did on average.
std::string progressTime(const Hooks& hooks, int done = 0, int total = 0);

// One run of `config` into `dir`: a `workbench-cli run` (the binary at cli_path), or with
// `command` set the user's command with the config's settings, `who` naming it in the command's
// errors ("workers, pair 2"). The one place that chooses, for the runner, tune's trials and the
// batch finder. on_event: a workbench run's merged events.
Result<launch::RunOutcome> launchOne(const Config& config, const std::filesystem::path& dir, const UserCommand& command,
                                     const std::string& cli_path, const std::string& who,
                                     const std::function<void(const nlohmann::json&)>& on_event = {});

// Runs (or continues) the plan in `out` (created with runs/ when missing). An Error only when
// the folder cannot be used: another plan's pairs.json (InvalidConfig, naming the step), or a
// file that cannot be written (Io, naming it).
Result<Outcome> runPairs(const Plan& plan, const Policy& policy, const std::filesystem::path& out, const Hooks& hooks);

// The floor for the spread of few pairs when none is given: this host's measured band (`workbench-cli
// noise`), else 0 (an unmeasured host: the pairs alone carry the noise).
double hostFloorBand();

// pairs.json's name in a folder; true when `out` holds one (a folder the runner can continue).
std::filesystem::path pairsFile(const std::filesystem::path& out);
bool holdsPairs(const std::filesystem::path& out);

}  // namespace wb::experiment
