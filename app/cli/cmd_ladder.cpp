// workbench-cli ladder: the baseline, then each speedup added in turn (the recipe's order). This
// file reads the options and decides the plan with what only the trainer knows (the machine's
// capabilities and config checks); the plan and the maths live in wb/report/ladder.h, the loop
// (runs through wb::launch, outputs, the PNG from the SVG, the ladder's events) in
// wb/ladder/ladder_run.h.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "args.h"
#include "experiment.h"
#include "commands.h"
#include "wb/common/paths.h"
#include "wb/ladder/ladder_run.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/report/ladder.h"
#include "wb/report/probe.h"
#include "wb/train/trainer.h"

namespace wb::cli {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kHelp = R"(Usage: workbench-cli ladder [options]

Runs the baseline (every speedup off: workers 0, pin memory off, devices 1, precision 32-true,
no early stopping, sharding off, grad-enabled evaluation), then adds the speedups one at a time,
cumulatively: workers (the stored `probe workers` result for this experiment, else
min(cores, 4)) -> pin memory -> devices (the GPUs, or 2 CPU processes) ->
precision (16-mixed on CUDA, bf16-mixed on CPU) -> early stopping (patience 2) -> sharding
(zero1, needs devices > 1) -> inference-mode evaluation. What this machine cannot do (see
`workbench-cli capabilities`) is skipped with the reason.

Writes into --out: runs/<step>/ (one run folder per step and repeat), ladder.md, ladder.csv,
ladder.tex, ladder.json, ladder.html (self-contained, with the chart and the advisor's verdicts),
ladder.svg and ladder.png (the speedup-to-target bar chart). The tables are rewritten after each
run, so a cancelled ladder keeps what it measured.

Options:
  --config FILE      the experiment (model, data, epochs...); its speedups are replaced by the ladder's
  --set KEY=VALUE    override one field (repeatable), e.g. --set data.limit_train=2000
  --out DIR          output folder (default <runs-root>/<timestamp>-ladder-<id>); must be new or empty
  --runs-root DIR    where the default --out goes (default $WB_RUNS_ROOT or ~/.local/share/speedup-workbench/runs)
  --repeats N        runs per step (default 1), in interleaved rounds (every step once, then
                     again); n >= 3 gives a median with its min-max range. A run measured while
                     other processes used the CPU (contended) is run once more and left out
  --rerun-contended N  run a contended measurement up to N more times (default 1)
  --steps KEY,...    run only these steps besides the baseline (workers, pin_memory, devices,
                     precision, early_stopping, sharding, inference_eval); the others are listed
                     as left out. Each step keeps its place in the cumulative order
  --isolated         also run each speedup alone against the baseline
  --lr-scaling M     linear | sqrt: the steps on more than one device train with optim.lr_scaling=M
                     (lr x devices or x sqrt(devices), after a short warm-up), so the devices step
                     reaches the baseline's accuracy in the same epochs (default: the config's)
  --target-acc X     target val accuracy (default: the lowest best val acc of the baseline's repeats)
  --dry-run          print the plan and exit
  --events-stdout    JSON Lines on stdout instead of the table: `ladder` (the plan and --out),
                     `rung_start` / `rung_end` per run, `warning`, `error`, and `end` (status and
                     the ladder's result, as ladder.json holds it); see wb/ladder/ladder_run.h

Exit codes: 0 every step that could run produced a result, 1 a step failed, 2 bad config or
usage, 130 cancelled (the tables so far are written).
)";

// A planned step this machine's config checks refuse (e.g. fp16 without CUDA) becomes skipped.
void refuseWhatTheMachineRejects(report::LadderStep& s) {
  if (s.skipped) return;
  auto errs = validate(s.config);
  for (auto& e : train::machineConfigErrors(s.config, 1)) errs.push_back(e);
  if (errs.empty()) return;
  s.skipped = true;
  s.note = formatFieldErrors(errs);
}

// --steps: the baseline and the listed steps run; the others stay in the plan, left out with a note.
Status keepOnlySteps(std::vector<report::LadderStep>& plan, const std::string& list) {
  std::vector<std::string> keys;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) keys.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  std::string known;
  for (const auto& s : plan) known += (known.empty() ? "" : ", ") + s.key;
  for (const auto& k : keys)
    if (std::none_of(plan.begin(), plan.end(), [&](const report::LadderStep& s) { return s.key == k; }))
      return makeError(Errc::InvalidConfig, "--steps: unknown step '" + k + "' (this plan has " + known + ")");
  for (auto& s : plan)
    if (s.key != "baseline" && !s.skipped && std::find(keys.begin(), keys.end(), s.key) == keys.end())
      s.skipped = true, s.note = "left out (--steps)";
  return {};
}

void printPlan(const std::vector<report::LadderStep>& plan) {
  report::Table t;
  t.columns = {{"step", "Step", ""}, {"added", "What is added", ""}, {"note", "Note", ""}};
  for (size_t i = 0; i < plan.size(); ++i) {
    const auto& s = plan[i];
    t.rows.push_back({report::Cell::str(s.slug(static_cast<int>(i))), report::Cell::str(s.added),
                      report::Cell::str((s.skipped ? "skipped: " : "") + s.note)});
  }
  std::printf("%s", report::renderText(t).c_str());
}

Result<fs::path> prepareOut(const Args& args) {
  fs::path out;
  if (auto o = args.get("out")) out = *o;
  else out = fs::path(args.get("runs-root", defaultRunsRoot().string())) / makeRunId("ladder");
  std::error_code ec;
  out = fs::absolute(out, ec);
  if (fs::exists(out, ec) && (!fs::is_directory(out, ec) || !fs::is_empty(out, ec)))
    return makeError(Errc::Io, "--out " + out.string() + ": exists and is not an empty folder (choose a new one)");
  fs::create_directories(out / "runs", ec);
  if (ec) return makeError(Errc::Io, "--out " + out.string() + ": cannot create it: " + ec.message());
  return out;
}

}  // namespace

int cmdLadder(const Argv& argv) {
  Args args(argv, {"help", "isolated", "dry-run", "events-stdout"},
            {"config", "set", "out", "runs-root", "repeats", "target-acc", "steps", "rerun-contended", "lr-scaling"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (!args.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", args.error().c_str());
    return 2;
  }
  auto config = resolveConfig(args);
  if (!config.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: invalid config:\n%s\n", config.error().message.c_str());
    return 2;
  }
  int repeats = 1;
  try {
    repeats = std::stoi(args.get("repeats", "1"));
  } catch (const std::exception&) {
    repeats = 0;
  }
  if (repeats < 1 || repeats > 100) {
    std::fprintf(stderr, "workbench-cli ladder: --repeats %s: must be a whole number from 1 to 100\n", args.get("repeats", "").c_str());
    return 2;
  }
  std::optional<double> target;
  if (auto t = args.get("target-acc")) {
    auto parsed = report::parseTargetAccuracy(*t);
    if (!parsed.ok()) {
      std::fprintf(stderr, "workbench-cli ladder: %s\n", parsed.error().message.c_str());
      return 2;
    }
    target = *parsed;
  }

  int reruns = 1;
  try {
    reruns = std::stoi(args.get("rerun-contended", "1"));
  } catch (const std::exception&) {
    reruns = -1;
  }
  if (reruns < 0 || reruns > 10) {
    std::fprintf(stderr, "workbench-cli ladder: --rerun-contended %s: must be a whole number from 0 to 10\n",
                 args.get("rerun-contended", "").c_str());
    return 2;
  }
  json caps = train::capabilitiesJson();
  report::attachProbe(caps, report::loadProbe(*config));  // the workers step's count, when probed
  auto plan = report::planLadder(*config, caps, args.has("isolated"));
  if (auto st = report::applyLadderLrScaling(plan, args.get("lr-scaling", config->optim.lr_scaling)); !st.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", st.error().message.c_str());
    return 2;
  }
  for (auto& s : plan) refuseWhatTheMachineRejects(s);
  if (auto only = args.get("steps")) {
    if (auto st = keepOnlySteps(plan, *only); !st.ok()) {
      std::fprintf(stderr, "workbench-cli ladder: %s\n", st.error().message.c_str());
      return 2;
    }
  }
  if (args.has("dry-run")) {
    printPlan(plan);
    return 0;
  }
  auto out = prepareOut(args);
  if (!out.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", out.error().message.c_str());
    return 1;
  }
  installStopSignals();
  std::fprintf(stderr, "ladder -> %s (%zu steps, %d repeat(s) each)\n", out->c_str(), plan.size(), repeats);
  const bool eventsOut = args.has("events-stdout");
  ladder::LadderOptions lo;
  lo.plan = std::move(plan);
  lo.out = *out;
  lo.repeats = repeats;
  lo.rerun_contended = reruns;
  lo.target_acc = target;
  lo.cli_path = selfPath();
  lo.stop = &stopFlag();
  if (eventsOut)
    lo.on_event = [](const json& ev) {
      std::fprintf(stdout, "%s\n", proto::encodeEvent(ev).c_str());
      std::fflush(stdout);
    };
  auto result = ladder::runLadder(lo);
  if (!result.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", result.error().message.c_str());
    if (eventsOut) {
      json ev = proto::makeEvent("error", -1, 0.0);
      ev["message"] = result.error().message;
      std::fprintf(stdout, "%s\n", proto::encodeEvent(ev).c_str());
    }
    return 1;
  }
  const std::string table = report::renderText(report::ladderTable(result->ladder));
  std::fprintf(eventsOut ? stderr : stdout, "%s\n", table.c_str());
  std::fprintf(eventsOut ? stderr : stdout, "wrote %s/ladder.{md,csv,tex,json,html,svg,png} and the runs in %s/runs\n",
               out->c_str(), out->c_str());
  if (result->cancelled) std::fprintf(stderr, "ladder cancelled: the tables hold the steps that finished\n");
  return result->exitCode();
}

}  // namespace wb::cli
