// workbench-cli ladder: the baseline, then each speedup added in turn (the recipe's order). This
// file reads the options and decides the plan with what only the trainer knows (the machine's
// capabilities and config checks); the plan and the maths live in wb/report/ladder.h, the loop
// (runs through wb::launch, outputs, the PNG from the SVG, the ladder's events) in
// wb/ladder/ladder_run.h.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "experiment.h"
#include "commands.h"
#include "wb/common/paths.h"
#include "wb/ladder/ladder_run.h"
#include "wb/proto/config_json.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/report/ladder.h"
#include "wb/report/probe.h"
#include "wb/train/trainer.h"

namespace wb::cli {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kAbout = R"(baseline, then each speedup added in turn; writes the ladder table and chart

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
run, so a cancelled ladder keeps what it measured.)";

const char* kFooter = R"(
Exit codes: 0 every step that could run produced a result, 1 a step failed, 2 bad config or
usage, 130 cancelled (the tables so far are written).)";

struct LadderCliOptions {
  ExperimentOptions experiment;
  std::string out, runs_root, steps, lr_scaling, target_acc;
  int repeats = 1, rerun_contended = 1;
  bool isolated = false, dry_run = false, events_stdout = false;
};

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

Result<fs::path> prepareOut(const LadderCliOptions& o) {
  fs::path out = o.out;
  if (out.empty()) out = fs::path(o.runs_root.empty() ? defaultRunsRoot() : fs::path(o.runs_root)) / makeRunId("ladder");
  std::error_code ec;
  out = fs::absolute(out, ec);
  if (fs::exists(out, ec) && (!fs::is_directory(out, ec) || !fs::is_empty(out, ec)))
    return makeError(Errc::Io, "--out " + out.string() + ": exists and is not an empty folder (choose a new one)");
  fs::create_directories(out / "runs", ec);
  if (ec) return makeError(Errc::Io, "--out " + out.string() + ": cannot create it: " + ec.message());
  return out;
}

int ladderCommand(const LadderCliOptions& o) {
  auto config = resolveConfig(o.experiment);
  if (!config.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: invalid config:\n%s\n", config.error().message.c_str());
    return 2;
  }
  std::optional<double> target;
  if (!o.target_acc.empty()) target = report::parseTargetAccuracy(o.target_acc).value();  // checked while parsing
  json caps = train::capabilitiesJson();
  report::attachProbe(caps, report::loadProbe(*config));  // the workers step's count, when probed
  auto plan = report::planLadder(*config, caps, o.isolated);
  if (auto st = report::applyLadderLrScaling(plan, o.lr_scaling.empty() ? config->optim.lr_scaling : o.lr_scaling); !st.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", st.error().message.c_str());
    return 2;
  }
  for (auto& s : plan) refuseWhatTheMachineRejects(s);
  if (!o.steps.empty()) {
    if (auto st = keepOnlySteps(plan, o.steps); !st.ok()) {
      std::fprintf(stderr, "workbench-cli ladder: %s\n", st.error().message.c_str());
      return 2;
    }
  }
  if (o.dry_run) {
    printPlan(plan);
    return 0;
  }
  auto out = prepareOut(o);
  if (!out.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", out.error().message.c_str());
    return 1;
  }
  installStopSignals();
  std::fprintf(stderr, "ladder -> %s (%zu steps, %d repeat(s) each)\n", out->c_str(), plan.size(), o.repeats);
  const bool eventsOut = o.events_stdout;
  ladder::LadderOptions lo;
  lo.plan = std::move(plan);
  lo.out = *out;
  lo.repeats = o.repeats;
  lo.rerun_contended = o.rerun_contended;
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
      const proto::ErrorEvent error{result.error().message, errcName(result.error().code), std::nullopt};
      std::fprintf(stdout, "%s\n", proto::encodeEvent(proto::toEvent(error, -1, 0.0)).c_str());
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

}  // namespace

void addLadder(CLI::App& cli, Commands& out) {
  auto o = std::make_shared<LadderCliOptions>();
  CLI::App* ladder = cli.add_subcommand("ladder", kAbout);
  addExperimentOptions(*ladder, o->experiment,
                       "the experiment (model, data, epochs...); its speedups are replaced by the ladder's");
  ladder->add_option("--out", o->out, "output folder (default <runs-root>/<timestamp>-ladder-<id>); must be new or empty")
      ->type_name("DIR");
  ladder->add_option("--runs-root", o->runs_root,
                     "where the default --out goes (default $WB_RUNS_ROOT or ~/.local/share/speedup-workbench/runs)")
      ->type_name("DIR")->check(utf8Path("--runs-root"));
  ladder->add_option("--repeats", o->repeats,
                     "runs per step (default 1), in interleaved rounds (every step once, then\n"
                     "again); n >= 3 gives a median with its min-max range. A run measured while\n"
                     "other processes used the CPU (contended) is run once more and left out")
      ->type_name("N")->check(inRange(1, 100));
  ladder->add_option("--rerun-contended", o->rerun_contended, "run a contended measurement up to N more times (default 1)")
      ->type_name("N")->check(inRange(0, 10));
  ladder->add_option("--steps", o->steps,
                     "run only these steps besides the baseline (workers, pin_memory, devices,\n"
                     "precision, early_stopping, sharding, inference_eval); the others are listed\n"
                     "as left out. Each step keeps its place in the cumulative order")
      ->type_name("KEY,...");
  ladder->add_flag("--isolated", o->isolated, "also run each speedup alone against the baseline");
  ladder->add_option("--lr-scaling", o->lr_scaling,
                     "the steps on more than one device train with optim.lr_scaling=M\n"
                     "(lr x devices or x sqrt(devices), after a short warm-up), so the devices step\n"
                     "reaches the baseline's accuracy in the same epochs (default: the config's)")
      ->type_name("M")->check(oneOf(lrScalingChoices()));
  ladder->add_option("--target-acc", o->target_acc,
                     "target val accuracy: 0.85, 85 or 85% (default: the lowest best val acc of the baseline's repeats)")
      ->type_name("X")->check(checkedBy([](const std::string& t) { return statusOf(report::parseTargetAccuracy(t)); }, ""));
  ladder->add_flag("--dry-run", o->dry_run, "print the plan and exit");
  ladder->add_flag("--events-stdout", o->events_stdout,
                   "JSON Lines on stdout instead of the table: `ladder` (the plan and --out),\n"
                   "`rung_start` / `rung_end` per run, `warning`, `error`, and `end` (status and\n"
                   "the ladder's result, as ladder.json holds it); see wb/ladder/ladder_run.h");
  ladder->footer(kFooter);
  out.push_back({ladder, [o] { return ladderCommand(*o); }});
}

}  // namespace wb::cli
