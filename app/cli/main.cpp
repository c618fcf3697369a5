// workbench-cli: the headless workbench (run | worker | ladder | compare | export | whatif |
// dataset | capabilities | probe). One CLI::App: each cmd_*.cpp adds its subcommand (commands.h).
// A parse error is one line on stderr naming the option, exit 2 (CLI11's own exit codes never
// reach the user). c10::Error and std::exception are caught once, here, and turned into a
// message and exit code 1; subcommands turn their own failures into documented exit codes.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>

#include "commands.h"
#include "wb/common/exit_codes.h"
#include "wb/kinds/experiment_kinds.h"
#include "wb/launch/warm_start.h"

namespace wb::cli {
int printVersion();  // version.cpp
}

namespace {
using namespace wb::cli;

const char* kAbout = "workbench-cli — measure which training speedups pay off on your model, data and hardware";

const char* kFooter = R"(
Exit codes: 0 ok, 1 other failure, 2 bad config or usage, 3 data error, 4 diverged, 130 cancelled.
With no command, `workbench-cli` runs the default experiment (Fashion-MNIST, lenet, 1 epoch);
`workbench-cli --set KEY=VALUE ...` (an option first) is `workbench-cli run --set KEY=VALUE ...`.
`workbench-cli <command> --help` for each command.)";

// The Commands list shows the first line of each command's description; its --help shows all.
class Formatter : public CLI::Formatter {
 public:
  std::string make_subcommand(const CLI::App* sub) const override {
    const std::string d = sub->get_description();
    std::string name = "  " + sub->get_name();
    name.resize(std::max(name.size() + 2, get_column_width()), ' ');
    return name + d.substr(0, d.find('\n')) + "\n";
  }
  // A command made of subcommands (probe, dataset, whatif) shows theirs in full below its own.
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    std::string out = CLI::Formatter::make_help(app, name, mode);
    if (app->get_parent() == nullptr || mode != CLI::AppFormatMode::Normal) return out;
    for (const CLI::App* sub : app->get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }))
      out += "\n" + make_help(sub, name + " " + sub->get_name(), mode);
    return out;
  }
  // A description of more than its first line is set off from the usage line below it.
  std::string make_description(const CLI::App* app) const override {
    const std::string d = CLI::Formatter::make_description(app);
    return d.find('\n') + 1 < d.size() ? d + "\n" : d;
  }
};

// The arguments after the program name, with `run` in front when no command is named.
std::vector<std::string> withCommand(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return {"run"};
  if (args[0] == "help") args[0] = "--help";
  if (args[0].rfind("--", 0) == 0 && args[0] != "--help" && args[0] != "--version") args.insert(args.begin(), "run");
  return args;
}

// The subcommand the parse reached (the deepest one named), or the root.
CLI::App* reached(CLI::App& root) {
  CLI::App* at = &root;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return at;
}

// CLI11 prefixes a check's message with the option ("--from: --from x: ..."): once is enough.
std::string withoutRepeatedName(const std::string& message) {
  const size_t colon = message.find(": ");
  if (colon == std::string::npos) return message;
  const std::string name = message.substr(0, colon);
  if (message.compare(colon + 2, name.size() + 1, name + " ") == 0) return message.substr(colon + 2);
  return message;
}

int parseError(CLI::App& root, const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::CallForHelp*>(&e) || dynamic_cast<const CLI::CallForAllHelp*>(&e)) {
    std::fputs(root.help().c_str(), stdout);
    return wb::kExitOk;
  }
  CLI::App* at = reached(root);
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    for (CLI::App* a = at; a; a = a->get_parent())
      if (!a->remaining().empty()) return usageError(*a, extrasMessage(*a));
  }
  return usageError(*at, withoutRepeatedName(e.what()));
}

// The launcher has written and closed everything when `run` returns (summary.json fsynced, the
// events file closed); the libraries' static teardown that a return from main runs (LibTorch's
// registries among them) costs ~0.1 s that a user and the window would wait for with nothing
// left to do. Flush stdio, end the warm server (it leaves with the command, not after it), and leave.
[[noreturn]] void finishRun(int code) {
  wb::launch::stopWarmServer();
  std::fflush(nullptr);
  std::_Exit(code);
}

// Every command on `cli`, each with what it runs; `version` is set by --version.
Commands addCommands(CLI::App& cli, bool& version) {
  cli.formatter(std::make_shared<Formatter>());
  cli.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // the last one given wins
  cli.require_subcommand(0, 1);
  cli.add_flag("--version", version, "print the version and the libraries in use");
  Commands commands;
  for (auto add : {addRun, addWorker, addLadder, addTry, addCompare, addExport, addWhatIf, addDataset, addCapabilities, addProbe, addNoise, addTune})
    add(cli, commands);
  for (CLI::App* sub : cli.get_subcommands([](CLI::App*) { return true; })) sub->group("Commands");
  commands.push_back(addChooser(cli, "command"));  // `workbench-cli bogus`
  cli.footer(kFooter);  // after the subcommands: CLI11 copies a parent's footer into those added later
  return commands;
}

// The command the parse reached, run; `run` and `probe workers` leave through finishRun.
int runChosen(CLI::App& cli, const Commands& commands) {
  CLI::App* chosen = reached(cli);
  for (CLI::App* a = chosen->get_parent(); a; a = a->get_parent())  // `probe --bogus workers`
    if (!a->remaining().empty()) return usageError(*a, extrasMessage(*a));
  for (const Command& c : commands) {
    if (c.app != chosen) continue;
    if (c.fast_exit) finishRun(c.run());
    return c.run();
  }
  return wb::kExitFailed;  // every app has its command
}

}  // namespace

// The commands that start runs or measuring commands on this machine (launches, `probe` tools,
// `run`'s own ranks): their children are forked warm from a server this process starts before
// anything else (wb/launch/warm_start.h). WB_WARM_STARTS=0 starts every one cold, as exec would.
bool startsWarm(int argc, char** argv) {
  const char* off = std::getenv("WB_WARM_STARTS");
  if (off && std::string(off) == "0") return false;
  const std::vector<std::string> args = withCommand(argc, argv);
  if (args[0] == "noise" || args[0] == "run") return true;  // `run`: the window's runs, and a user's
  const auto& all = wb::kinds::experimentKinds();  // every experiment kind's command launches runs
  return std::any_of(all.begin(), all.end(), [&](const wb::kinds::ExperimentKind& k) { return args[0] == k.id; });
}

// main's work, also what a warm child runs on its own arguments.
int cliMain(int argc, char** argv) {
  CLI::App cli(kAbout, "workbench-cli");
  bool version = false;
  const Commands commands = addCommands(cli, version);
  try {
    std::vector<std::string> args = withCommand(argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
    try {
      cli.parse(args);
    } catch (const CLI::ParseError& e) {
      return parseError(cli, e);
    }
    if (version) return wb::cli::printVersion();
    return runChosen(cli, commands);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "workbench-cli: internal error: %s\n", e.what());
    return 1;
  }
}

int main(int argc, char** argv) {
  if (startsWarm(argc, argv) && wb::launch::startWarmServer(&cliMain, argc, argv)) std::atexit(wb::launch::stopWarmServer);
  return cliMain(argc, argv);
}
