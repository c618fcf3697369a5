#include "command_setup.h"

#include <signal.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "wb/proto/command_template.h"
#include "wb/launch/launcher.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/compare/compare.h"
#include "wb/probe/math_check.h"

namespace wb::cli {

void addUserCommandOptions(CLI::App& app, experiment::UserCommand& into) {
  app.add_option("--command", into.text,
                 "run your own training script instead of the workbench's trainer (its recorder or Lightning\n"
                 "callback writes {run_dir}, also in $WB_RUN_DIR); placeholders take each run's settings:\n" +
                     proto::speedupPlaceholders() +
                     "\nor any config path ({train.batch_size}), e.g. 'python3 train.py fit --trainer.precision\n"
                 "{precision} --data.num_workers {workers}' (default: the --config file's \"command\"). A change\n"
                 "the command has no placeholder for is not measurable.")
      ->type_name("TEMPLATE")
      ->check(checkedBy([](const std::string& t) { return statusOf(proto::commandFields(t)); }, ""));
  app.add_option("--command-idle-timeout", into.idle_timeout_s,
                 "with --command: a run that writes neither events nor output for S seconds hangs, and is\n"
                 "stopped and failed (default 900)")
      ->type_name("S")->check(inRange(1.0, 1e6));
}

experiment::UserCommand userCommandOf(const experiment::UserCommand& given, const ExperimentOptions& experiment) {
  if (given.set() || experiment.config.empty()) return given;
  experiment::UserCommand c = given;
  if (auto doc = proto::readConfigDocument(experiment.config); doc.ok()) c.text = proto::commandOf(*doc);
  return c;
}

void printEvent(const nlohmann::json& ev) {
  std::fprintf(stdout, "%s\n", proto::encodeEvent(ev).c_str());
  std::fflush(stdout);
}

experiment::Hooks cliHooks(bool eventsToStdout) {
  experiment::Hooks h;
  h.cli_path = selfPath();
  h.stop = &stopFlag();
  h.command = commandLine();
  if (eventsToStdout) h.on_event = printEvent;
  h.unchecked_math = [](const Config& baseline, const Config& variant) {
    probe::MathCheckOptions m;
    m.baseline = baseline;
    m.variant = variant;
    return probe::mathNotCheckable(m);
  };
  return h;
}

std::string commandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), {}), line;
  for (char c : all) line += c == '\0' ? ' ' : c;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

Result<Config> resolveConfig(const ExperimentOptions& options, const std::string& base) {
  nlohmann::json doc = nlohmann::json::object();
  std::optional<std::string> path;
  if (!options.config.empty()) path = options.config;
  else if (!base.empty()) path = base;
  if (path) {
    auto read = proto::readConfigDocument(*path);
    if (!read.ok()) return read.error();
    doc = std::move(*read);
  }
  std::string problems;
  auto note = [&](const std::string& line) { problems += (problems.empty() ? "" : "\n") + line; };
  for (const auto& s : options.sets)
    if (auto st = proto::applyOverride(doc, s); !st.ok()) note(st.error().message);
  if (auto errors = proto::configErrors(doc); !errors.empty()) note(formatFieldErrors(errors));
  if (!problems.empty()) return makeError(Errc::InvalidConfig, (path ? *path + ":\n" : "") + problems);
  return proto::configFromJson(doc);
}

Result<Arms> resolveArms(const ExperimentOptions& experiment, const std::vector<std::string>& vary,
                         const std::string& variantConfig) {
  auto base = resolveConfig(experiment);
  if (!base.ok()) return base.error();
  ExperimentOptions withVary = experiment;
  if (!variantConfig.empty()) withVary.config = variantConfig;
  withVary.sets.insert(withVary.sets.end(), vary.begin(), vary.end());
  auto variant = resolveConfig(withVary);
  if (!variant.ok()) return variant.error();
  return Arms{*base, *variant};
}

std::atomic<bool>& stopFlag() {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {
void onStopSignal(int) {
  stopFlag().store(true);
  launch::requestStop();
}
}  // namespace

void installStopSignals() {
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

experiment::Policy VerdictCliOptions::policy() const {
  experiment::Policy p;
  p.fixed_pairs = repeats;
  p.max_pairs = max_pairs;
  p.budget_s = budget_s;
  p.rerun_contended = rerun_contended;
  p.floor_band = noise_band >= 0 ? noise_band : experiment::hostFloorBand();
  p.min_effect = min_effect;
  if (!target_acc.empty()) p.target_acc = compare::parseTargetAccuracy(target_acc).value();  // checked while parsing
  return p;
}

bool ByPartsOptions::byParts() const {
  return !whole_runs && std::none_of(pair_options.begin(), pair_options.end(), [](const CLI::Option* o) { return o->count() > 0; });
}

bool ByPartsOptions::askedByParts() const {
  return std::any_of(parts_options.begin(), parts_options.end(), [](const CLI::Option* o) { return o->count() > 0; });
}

experiment::ComposedOptions ByPartsOptions::resolved() const {
  experiment::ComposedOptions c = composed;
  if (!references.empty()) c.references = references;
  return c;
}

void addByPartsOptions(CLI::App& app, ByPartsOptions& o, const std::string& measured) {
  app.add_flag("--whole-runs", o.whole_runs,
               "measure with whole runs in pairs (the reference method); by default " + measured + " is measured by\n"
               "parts (throughput, evaluation, samples to target against the experiment's reference runs);\n"
               "an option of pairs (--repeats, --max-pairs, ...) implies it");
  o.parts_options.push_back(app.add_option("--reference-runs", o.composed.reference_runs,
                 "by parts: the baseline's runs to the target, kept per experiment and reused (default 5; 0: none)")
      ->type_name("N")->check(inRange(0, 100)));
  o.parts_options.push_back(app.add_option("--variant-runs", o.composed.variant_runs,
                 "by parts: a variant's runs to the target when it changes the training's math, at most (default\n"
                 "5): looked at after each from the second, they stop once the time to target is clearly faster or\n"
                 "slower, or surely within --min-effect, each look spending its share of the false-alarm rate")
      ->type_name("N")->check(inRange(2, 100)));
  o.parts_options.push_back(app.add_option("--parallel-runs", o.composed.parallel,
                 "by parts: reference runs at once, the cores shared among them (default 1; 0: as many as the\n"
                 "cores hold at one core a process, 1 on a GPU). Their start-up, evaluation time and rate weigh\n"
                 "the parts of the time to target: side by side they slow each other, so those parts come from\n"
                 "the runs nothing slowed (one left to run alone), or, overstated, from all when none ran so")
      ->type_name("N")->check(inRange(0, 64)));
  o.parts_options.push_back(app.add_option("--variant-parallel", o.composed.variant_parallel,
                 "by parts: a variant's runs to the target at once after its first, which runs alone (its start-up\n"
                 "and evaluation time are the variant's; the others give their samples to target only, looked at\n"
                 "in seed order as if run in turn). Default 0: as many as the cores hold at one core a process\n"
                 "(1 on a GPU); 1: one after another. Inside a job --executor slurm sent, all but the first go\n"
                 "back to the cluster as one job array (N > 1: arrays of N, a look after each; 1: they stay in the job)")
      ->type_name("N")->check(inRange(0, 64)));
  app.add_option("--references", o.references,
                 "by parts: where every experiment's reference runs are kept (default $WB_REFERENCES_DIR, else\n"
                 "'references' beside the runs root)")
      ->type_name("DIR")->check(utf8Path("--references"));
}

}  // namespace wb::cli
