#pragma once
// workbench-cli's options, on CLI11. main.cpp holds the one CLI::App; each cmd_*.cpp adds its
// subcommand with typed options into a small struct and hands back what to run (a Command).
// Every value is checked while parsing (numbers by inRange, choices by oneOf or a rule of core
// through checkedBy), so a bad value is a usage error (exit 2) naming the option before
// anything runs. Errors found after parsing (option combinations) stay with the commands.
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "wb/common/choices.h"
#include "wb/common/result.h"

namespace wb::cli {

// A subcommand with nothing below it and its action, run after a successful parse.
struct Command {
  CLI::App* app = nullptr;   // owned by its parent CLI::App
  std::function<int()> run;  // the process exit code
  bool fast_exit = false;    // run, probe: main leaves through std::_Exit once stdio is flushed
};
using Commands = std::vector<Command>;

// --config FILE and the repeatable --set KEY=VALUE of run, worker, ladder and probe.
struct ExperimentOptions {
  std::string config;
  std::vector<std::string> sets;
};
void addExperimentOptions(CLI::App& app, ExperimentOptions& into, const std::string& configHelp);

// --executor local|slurm and the repeatable --sbatch-arg=ARG passed through to sbatch (partition,
// account, time, gres) of the commands that can send their runs to a Slurm cluster.
struct ExecutorOptions {
  std::string executor = "local";
  std::vector<std::string> sbatch_args;
  bool slurm() const { return executor == "slurm"; }
  bool inSlurmJob() const { return executor == kInSlurmJob; }  // the job --executor slurm sent
  static constexpr const char* kInSlurmJob = "slurm-job";
};
// `sentAsAJob`: the command runs whole as one job under --executor slurm (try, ladder, tune), so it
// also takes slurm-job, what that job runs; one whose runs are the jobs (noise) refuses it.
void addExecutorOptions(CLI::App& app, ExecutorOptions& into, bool sentAsAJob = true);

// A number of type T (whole for integers) in [min, max]; refuses NaN, junk after the number and
// numbers past T. Its help reads "min..max" (">= min" when max is T's largest); its error
// "'<value>' is not a whole number in 1..100".
template <typename T>
CLI::Validator inRange(T min, T max);

// A comma-separated list option (--candidates 0,1,2), each item checked by `item` (inRange)
// while parsing and read into `into`; as with every other option the last one given wins.
template <typename T>
CLI::Option* addListOption(CLI::App& app, const std::string& name, std::vector<T>& into, const CLI::Validator& item,
                           const std::string& help);

// One of a choices.h table's values (the help lists them).
CLI::Validator oneOf(const std::vector<Choice>& choices);
// The rule of core that `check` applies (its error message, which names the option, is the
// error): e.g. report::parseFormat, wb::checkResumeFrom, compare::parseTargetAccuracy.
CLI::Validator checkedBy(std::function<Status(const std::string&)> check, const std::string& what);
// ok, or r's error (for checkedBy over a parser of core).
template <typename T>
Status statusOf(const Result<T>& r) {
  if (r.ok()) return {};
  return r.error();
}
// A path the run records in JSON: it must be valid UTF-8 (wb::requireUtf8Path).
CLI::Validator utf8Path(const std::string& option);

// `what` of a command made of subcommands (the root; probe workers, dataset export|inspect,
// whatif early-stopping), added after them: with none named, or an unknown one (left in
// app.remaining(): the app allows extras), main runs this command: a usage error naming the
// ones there are.
Command addChooser(CLI::App& app, const std::string& what);

// What CLI11 left unparsed in `app`: "unknown option --bogus; the options are --config, ..."
// or "unexpected argument 'x'".
std::string extrasMessage(const CLI::App& app);

// "workbench-cli dataset export" for `app`.
std::string commandPath(const CLI::App& app);
// One line on stderr, "<commandPath>: <message> (see <commandPath> --help)"; returns 2.
int usageError(const CLI::App& app, const std::string& message);

// ---- inline template ----
std::string rangeText(double min, double max);

template <typename T>
CLI::Validator inRange(T min, T max) {
  const bool open = max == std::numeric_limits<T>::max();
  const std::string range =
      rangeText(static_cast<double>(min), open ? std::numeric_limits<double>::max() : static_cast<double>(max));
  const char* kind = std::numeric_limits<T>::is_integer ? "a whole number" : "a number";
  return CLI::Validator(
      [=](std::string& input) {
        T v{};
        bool ok = CLI::detail::lexical_cast(input, v);
        if constexpr (!std::numeric_limits<T>::is_integer) ok = ok && !std::isnan(v);
        if (ok && v >= min && v <= max) return std::string();
        return "'" + input + "' is not " + kind + (range[0] == '>' ? " " : " in ") + range;
      },
      range);
}

template <typename T>
CLI::Option* addListOption(CLI::App& app, const std::string& name, std::vector<T>& into, const CLI::Validator& item,
                           const std::string& help) {
  CLI::Option* opt = app.add_option_function<std::string>(
      name,
      [&into](const std::string& text) {
        into.clear();
        for (const std::string& s : CLI::detail::split(text, ',')) {
          T v{};
          CLI::detail::lexical_cast(s, v);  // `item` accepted it
          into.push_back(v);
        }
      },
      help);
  opt->check(CLI::Validator(
      [item](std::string& text) {
        for (std::string s : CLI::detail::split(text, ','))
          if (std::string problem = item(s); !problem.empty()) return problem;
        return std::string();
      },
      item.get_description()));
  return opt;
}

}  // namespace wb::cli
