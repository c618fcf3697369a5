#include "options.h"

#include <cstdio>

#include "wb/common/exit_codes.h"
#include "wb/common/paths.h"

namespace wb::cli {

void addExecutorOptions(CLI::App& app, ExecutorOptions& into, bool sentAsAJob) {
  const std::string help = "where the runs go: local (this machine, default) or slurm (each run a job of the\n"
                           "Slurm cluster's array, through sbatch; the folder must be one every node sees)";
  std::vector<std::string> where{"local", "slurm"};
  if (sentAsAJob) where.push_back(ExecutorOptions::kInSlurmJob);
  app.add_option("--executor", into.executor,
                 sentAsAJob ? help + ";\nslurm-job is what the job itself runs: its runs to the target go back to the cluster" : help)
      ->type_name("WHERE")->check(CLI::IsMember(where));
  app.add_option("--sbatch-arg", into.sbatch_args,
                 "passed to sbatch as it is, e.g. --sbatch-arg=--partition=gpu --sbatch-arg=--time=30\n"
                 "(repeatable; with --executor slurm)")
      ->type_name("ARG")->allow_extra_args(false);
}

void addExperimentOptions(CLI::App& app, ExperimentOptions& into, const std::string& configHelp) {
  app.add_option("--config", into.config, configHelp)->type_name("FILE")->check(utf8Path("--config"));
  app.add_option("--set", into.sets,
                 "override one config field, e.g. --set optim.lr=0.05 (repeatable;\n"
                 "the fields: docs/runs.md \"Config\"; the values: `workbench-cli run --help`)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false)
      ->take_all();
}

std::string rangeText(double min, double max) {
  auto text = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    return std::string(buf);
  };
  if (max >= std::numeric_limits<double>::max()) return ">= " + text(min);
  return text(min) + ".." + text(max);
}

CLI::Validator oneOf(const std::vector<Choice>& choices) {
  const std::string values = choiceValues(choices, ", ");
  return CLI::Validator(
      [&choices, values](std::string& input) {
        if (findChoice(choices, input)) return std::string();
        return "'" + input + "' is not one of " + values;
      },
      choiceValues(choices, "|"));
}

CLI::Validator checkedBy(std::function<Status(const std::string&)> check, const std::string& what) {
  return CLI::Validator(
      [check](std::string& input) {
        const Status st = check(input);
        return st.ok() ? std::string() : st.error().message;
      },
      what);
}

CLI::Validator utf8Path(const std::string& option) {
  return checkedBy([option](const std::string& path) { return requireUtf8Path(option, path); }, "");
}

std::string commandPath(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* p = app.get_parent(); p; p = p->get_parent()) path = p->get_name() + " " + path;
  return path;
}

int usageError(const CLI::App& app, const std::string& message) {
  const std::string path = commandPath(app);
  std::fprintf(stderr, "%s: %s (see %s --help)\n", path.c_str(), message.c_str(), path.c_str());
  return kExitUsage;
}

std::string extrasMessage(const CLI::App& app) {
  const std::string first = app.remaining().front();
  if (first.rfind("-", 0) != 0 || first == "-") return "unexpected argument '" + first + "'";
  std::string known;
  for (const CLI::Option* opt : app.get_options())
    if (opt->nonpositional()) known += (known.empty() ? "" : ", ") + opt->get_name();
  return "unknown option " + first.substr(0, first.find('=')) + "; the options are " + known;
}

Command addChooser(CLI::App& app, const std::string& what) {
  app.allow_extras();            // an unknown name stays in remaining() for the message below
  app.require_subcommand(0, 1);  // and no sibling's name is read as a command once one is chosen
  CLI::App* self = &app;
  return {self, [self, what] {
            std::string names;
            for (const CLI::App* sub : self->get_subcommands([](CLI::App* s) { return !s->get_name().empty(); }))
              names += (names.empty() ? "" : ", ") + sub->get_name();
            const std::vector<std::string> extras = self->remaining();
            if (extras.empty()) return usageError(*self, "name the " + what + ": " + names);
            if (extras.front().rfind("-", 0) == 0) return usageError(*self, extrasMessage(*self));
            const bool one = self->get_subcommands([](CLI::App* s) { return !s->get_name().empty(); }).size() == 1;
            return usageError(*self, "unknown " + what + " '" + extras.front() + "' (there " + (one ? "is " : "are ") +
                                         names + ")");
          }};
}

}  // namespace wb::cli
