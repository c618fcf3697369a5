#pragma once
// What the commands that run training share (run, worker, try, ladder, tune, probe, noise): the
// config from --config/--set, the by-parts, verdict and user-command options, the stop flag that
// SIGINT/SIGTERM set (and pass on to a running launchRun), and the runner's hooks.
#include <atomic>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "options.h"
#include "wb/experiment/composed_try.h"
#include "wb/experiment/paired_runner.h"
#include "wb/common/config.h"
#include "wb/common/result.h"

namespace wb::cli {

// The by-parts method's options, one set for try, ladder and tune: --whole-runs, --reference-runs,
// --variant-runs, --parallel-runs, --variant-parallel, --references. An option of the whole-run
// method given (pairs: --repeats, --max-pairs, ...; registered in pair_options) asks for whole
// runs too.
struct ByPartsOptions {
  bool whole_runs = false;
  experiment::ComposedOptions composed;
  std::string references;
  std::vector<const CLI::Option*> pair_options;
  std::vector<const CLI::Option*> parts_options;  // by parts' own (--reference-runs, ...; try's --by-parts)
  bool byParts() const;                          // neither --whole-runs nor an option of pairs given
  bool askedByParts() const;                     // an option of by parts given (try: by parts, not chosen)
  experiment::ComposedOptions resolved() const;  // composed, with --references when given
};
// The verdict's options of try, ladder and tune as given (each command registers those it takes,
// with its own help), and the runner's policy they make: one rule for the host's band (the
// measured one when --noise-band is not given) and the target.
struct VerdictCliOptions {
  int repeats = 0, max_pairs = experiment::kDefaultMaxPairs, rerun_contended = stats::kReplacedPairs;
  double budget_s = experiment::kDefaultBudgetS, noise_band = -1, min_effect = stats::kDefaultMinEffect;
  std::string target_acc;  // as given; checked while parsing
  experiment::Policy policy() const;
};

// `measured`: what goes by parts, for the help ("the change", "every greedy step", "each finalist").
void addByPartsOptions(CLI::App& app, ByPartsOptions& o, const std::string& measured);

// --config FILE (or `base`, a config.json, when no --config is given) then every --set
// KEY=VALUE, validated at once: every bad --set, unknown field, wrong type and bad value in one
// InvalidConfig error, one per line, naming the file and fields; malformed JSON gives
// file:line:column. (The path options' UTF-8 rule is checked while parsing: utf8Path.)
Result<Config> resolveConfig(const ExperimentOptions& options, const std::string& base = "");

// The two arms of a command that compares a variant with its baseline (try, probe math, probe
// segments): the experiment, and the same with --variant-config (its file instead of --config, when
// given) and every --vary applied on top. Errors as resolveConfig.
struct Arms {
  Config baseline, variant;
};
Result<Arms> resolveArms(const ExperimentOptions& experiment, const std::vector<std::string>& vary,
                         const std::string& variantConfig);

// --command TEMPLATE and --command-idle-timeout S of try, ladder and tune: every run is the
// user's own training script with the arm's settings (wb/launch/command_run.h), not the core's.
void addUserCommandOptions(CLI::App& app, experiment::UserCommand& into);
// --command as given, else the "command" of the --config file (an experiment the window saved
// with the user's script: wb/proto/config_json.h commandOf).
experiment::UserCommand userCommandOf(const experiment::UserCommand& given, const ExperimentOptions& experiment);

// The command line as run (/proc/self/cmdline), kept in an experiment's folder for "continue it
// with ..." when another plan meets the folder (ladder, tune).
std::string commandLine();

// Set by SIGINT/SIGTERM once installStopSignals() ran; SIGPIPE is ignored from then on.
std::atomic<bool>& stopFlag();
void installStopSignals();

// One event as a line of JSON on stdout (--events-stdout), flushed.
void printEvent(const nlohmann::json& ev);
// The runner's hooks of try, ladder, tune and the batch finder: this binary for the ranks,
// stopFlag(), the command line, progress on stderr, and the events on stdout when asked.
experiment::Hooks cliHooks(bool eventsToStdout);

}  // namespace wb::cli
