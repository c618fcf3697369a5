// workbench-cli probe workers: how many loader workers this experiment wants on this machine.
// The measuring is wb::probe (core/probe), the record, rule, table and chart wb::report (probe.h);
// this file reads the options, prints, stores the result and writes the plot (PNG through
// rsvg-convert when it is installed).
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "args.h"
#include "commands.h"
#include "experiment.h"
#include "wb/probe/workers.h"
#include "wb/report/probe.h"

extern char** environ;

namespace wb::cli {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kHelp = R"(Usage: workbench-cli probe workers [options]

Times (a) the loader alone (0 workers, the real dataset and transforms, no model), (b) the
training step alone (the real model and optimiser on one cached batch, no loading), then (c)
each candidate worker count for a few seconds on the real experiment (real loader, real steps;
two interleaved rounds, so a change in the machine's load falls on every count), and recommends the smallest count within 2 % of the best samples/s. Says so when the data path
is not the bottleneck (then more workers cannot help).

The result is stored per machine and experiment (host, CPU and the experiment's data, model and
batch size) in <probes>/<key>.json, with the plot of samples/s against workers beside it
(<key>.svg, and <key>.png when rsvg-convert is installed). <probes> is $WB_PROBES_DIR, else
"probes" beside the runs root (~/.local/share/speedup-workbench/probes). The ladder's workers
step and the window's Loader workers toggle read it.

Options:
  --config FILE        the experiment (default: Fashion-MNIST, lenet)
  --set KEY=VALUE      override one field (repeatable), e.g. --set model.name=resnet18
  --candidates LIST    worker counts to time, e.g. 0,1,2,4 (default 0,1,2,4, and the cores when > 4)
  --seconds S          timed seconds per candidate (default 3; the loader and the step alone get
                       half of it each), from 0.2 to 60
  --json               print the result as one JSON document (progress goes to stderr)
  --no-store           do not store the result (nor write the plot)

Exit codes: 0 ok, 1 other failure, 2 bad config or usage, 3 data error, 130 cancelled.
)";

Result<std::vector<int>> parseCandidates(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v < 0 || v > 256)
      return makeError(Errc::InvalidConfig, "--candidates " + text + ": '" + item +
                                                "' is not a worker count from 0 to 256 (e.g. --candidates 0,1,2,4)");
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (out.empty()) return makeError(Errc::InvalidConfig, "--candidates: give at least one worker count, e.g. 0,2");
  return out;
}

Result<double> parseSeconds(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= 0.2 && v <= 60))
    return makeError(Errc::InvalidConfig, "--seconds " + text + ": must be a number of seconds from 0.2 to 60");
  return v;
}

// Runs argv[0] from PATH; true when it exited 0. False when it is not installed.
bool runProgram(std::vector<std::string> argv) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return false;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Stores the result and its plot; the files written, by kind ("json", "svg", "png").
json storeResult(const report::ProbeResult& r, std::string* problem) {
  json files = json::object();
  const fs::path dir = report::probesDir();
  if (auto st = report::saveProbe(r, dir); !st.ok()) {
    *problem = st.error().message;
    return files;
  }
  files["json"] = (dir / (r.key + ".json")).string();
  const fs::path svg = dir / (r.key + ".svg");
  std::ofstream(svg) << report::toSvg(report::probeChart(r));
  files["svg"] = svg.string();
  const fs::path png = dir / (r.key + ".png");
  if (runProgram({"rsvg-convert", "--zoom", "2", "--background-color", "white", "-o", png.string(), svg.string()}))
    files["png"] = png.string();
  return files;
}

int probeWorkersCommand(const Argv& argv) {
  Args args(argv, {"help", "json", "no-store"}, {"config", "set", "candidates", "seconds"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (!args.ok() || !args.positionals().empty()) {
    std::fprintf(stderr, "workbench-cli probe workers: %s\n\n%s",
                 args.ok() ? ("unexpected argument '" + args.positionals()[0] + "'").c_str() : args.error().c_str(), kHelp);
    return 2;
  }
  auto config = resolveConfig(args);
  if (!config.ok()) {
    std::fprintf(stderr, "workbench-cli probe workers: %s\n", config.error().message.c_str());
    return 2;
  }
  probe::WorkersProbeOptions o;
  o.config = *config;
  if (auto c = args.get("candidates")) {
    auto parsed = parseCandidates(*c);
    if (!parsed.ok()) return std::fprintf(stderr, "workbench-cli probe workers: %s\n", parsed.error().message.c_str()), 2;
    o.candidates = *parsed;
  }
  if (auto s = args.get("seconds")) {
    auto parsed = parseSeconds(*s);
    if (!parsed.ok()) return std::fprintf(stderr, "workbench-cli probe workers: %s\n", parsed.error().message.c_str()), 2;
    o.seconds = *parsed;
  }
  o.progress = [](const std::string& line) { std::fprintf(stderr, "probe: %s\n", line.c_str()); };
  installStopSignals();
  o.stop = &stopFlag();

  auto result = probe::probeWorkers(o);
  if (!result.ok()) {
    std::fprintf(stderr, "workbench-cli probe workers: %s\n", result.error().message.c_str());
    return exitCodeFor(result.error().code);
  }
  std::string problem;
  const json files = args.has("no-store") ? json::object() : storeResult(*result, &problem);
  if (!problem.empty()) std::fprintf(stderr, "workbench-cli probe workers: not stored: %s\n", problem.c_str());
  if (args.has("json")) {
    json doc = report::probeJson(*result);
    doc["files"] = files;
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    std::printf("%s", report::renderText(report::probeTable(*result)).c_str());
    std::printf("\nMeasured in %.1f s.\n", result->total_s);
    for (const auto& [kind, path] : files.items()) std::printf("%-4s %s\n", kind.c_str(), path.get<std::string>().c_str());
  }
  return problem.empty() ? 0 : 1;
}

}  // namespace

int cmdProbe(const Argv& argv) {
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h") {
    std::fputs(kHelp, argv.empty() ? stderr : stdout);
    return argv.empty() ? 2 : 0;
  }
  if (argv[0] != "workers") {
    std::fprintf(stderr, "workbench-cli probe: unknown probe '%s' (there is one: workers)\n", argv[0].c_str());
    return 2;
  }
  return probeWorkersCommand(Argv(argv.begin() + 1, argv.end()));
}

}  // namespace wb::cli
