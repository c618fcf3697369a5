// workbench-cli ladder: the baseline, then each speedup added in turn (the recipe's order). This
// file reads the options and decides the plan with what only the trainer knows (the machine's
// capabilities and config checks); the plan and the maths live in wb/ladder/ladder.h, the loop
// (runs through wb::launch, outputs, the PNG from the SVG, the ladder's events) in
// wb/ladder/ladder_run.h.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "answer_out.h"
#include "command_setup.h"
#include "slurm_exec.h"
#include "commands.h"
#include "wb/common/speedups.h"
#include "wb/common/exit_codes.h"
#include "wb/common/fs.h"
#include "wb/common/paths.h"
#include "wb/experiment/paired_runner.h"
#include "wb/ladder/ladder_run.h"
#include "wb/proto/config_json.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/ladder/ladder.h"
#include "wb/probe/record.h"
#include "wb/train/trainer.h"
#include "wb/proto/record_files.h"
#include "wb/kinds/experiment_kinds.h"

namespace wb::cli {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kAbout = R"(baseline, then each speedup in turn, keeping what pays; writes the ladder table, chart and kept.json

Runs the baseline (every speedup off: workers 0, pin memory off, devices 1, precision 32-true,
no early stopping, sharding off, grad-enabled evaluation), then tries the speedups one at a
time: workers (the stored `probe workers` result for this experiment, else min(cores, 4)) ->
pin memory -> devices (the GPUs, or 2 CPU processes, with the lr scaled for the larger global
batch: --lr-scaling) -> precision (16-mixed on CUDA, bf16-mixed on CPU) -> early stopping
(patience 2) -> sharding (zero1, needs devices > 1) -> inference-mode eval. What this
machine cannot do (see `workbench-cli capabilities`) is skipped with the reason.

Greedy (the default): each step is measured against the configuration kept so far, by parts
as `workbench-cli try` measures (the math check; segments or short trials for the steps,
evaluations interleaved in one process for the evaluation; when the math changes, runs to the
target against the experiment's reference runs; early stopping replayed on them), or as pairs of
whole runs (--whole-runs), and is kept only when it is clearly faster and still reaches the
target accuracy (else it is dropped, with the reason, and left out of what follows: small costs
within the noise would otherwise add up). The question being only "faster?", a step's segments
(when it keeps the math) and its runs to the target stop once under a 10 % chance is left that
their last look would call it faster ("cannot be faster"). A step that helps only with more
devices (sharding; accumulation, which on one device only makes the batch larger) is not
measured when more devices were measured and not kept. Last, the configuration kept runs as
pairs with the baseline. --cumulative: each step builds on the one before whatever it measured, and runs as
pairs with the baseline.

Pairs are close in time and in alternating order (reference then step, then step then
reference); a speedup is the geometric mean of the pairs' ratios with its interval, "faster" or
"slower" only when the interval excludes 1 and the estimate is beyond --min-effect (2 %), else
"within noise"; each look spends its share of a 5 % false-alarm rate. Pairs are added until the
verdict is clear, at most --max-pairs per step and --budget-s seconds (--repeats N: exactly N).

Writes into --out: steps/<step>/ (greedy: each step's pairs.json and runs) or runs/ and
pairs.json (cumulative), ladder.md, ladder.csv, ladder.tex, ladder.json, ladder.html
(self-contained, with the chart and the advisor's verdicts), ladder.svg and ladder.png (the
speedup-to-target bar chart), and kept.json (greedy: the configuration kept, for `workbench-cli
run --config kept.json`). The tables are rewritten after each pair, so a cancelled ladder keeps
what it measured; a pair cut short gives no speedup, and `ladder --out` on that folder
continues the ladder, running a cut pair again in new folders (a different plan is refused,
saying what differs).)";

const char* kFooter = R"(
Exit codes: 0 every step that could run produced a result, 1 a step failed, 2 bad config or
usage (or --out holds another plan's ladder), 130 cancelled (the tables so far are written).)";

struct LadderCliOptions {
  ExperimentOptions experiment;
  ExecutorOptions exec;
  experiment::UserCommand user_command;
  std::string out, runs_root, steps, lr_scaling, capabilities;
  VerdictCliOptions verdict;
  bool isolated = false, dry_run = false, events_stdout = false, cumulative = false, details = false;
  ByPartsOptions parts;  // greedy steps by parts unless whole runs are asked for (an option of pairs too)
};

// Greedy steps by parts unless pairs were asked for (--whole-runs, or an option of pairs).
bool byParts(const LadderCliOptions& o) { return !o.cumulative && o.parts.byParts(); }

void printPlan(const std::vector<ladder::LadderStep>& plan) {
  render::Table t;
  t.columns = {{"step", "Step", ""}, {"added", "What is added", ""}, {"note", "Note", ""}};
  for (size_t i = 0; i < plan.size(); ++i) {
    const auto& s = plan[i];
    t.rows.push_back({render::Cell::str(s.slug(static_cast<int>(i))), render::Cell::str(s.added),
                      render::Cell::str((s.skipped ? "skipped: " : "") + s.note)});
  }
  std::printf("%s", render::renderText(t).c_str());
}

// A new or empty folder, or one holding a ladder to continue (its pairs.json).
fs::path outPathOf(const LadderCliOptions& o) {
  fs::path out = o.out;
  if (out.empty()) out = fs::path(o.runs_root.empty() ? defaultRunsRoot() : fs::path(o.runs_root)) / makeRunId(kinds::kLadder);
  std::error_code ec;
  return fs::absolute(out, ec);
}

Result<fs::path> prepareOut(const LadderCliOptions& o) {
  const fs::path out = outPathOf(o);
  std::error_code ec;
  const bool ladderThere = experiment::holdsPairs(out) || fs::exists(out / proto::kPlanFile, ec);  // cumulative, or greedy
  if (fs::exists(out, ec) && (!fs::is_directory(out, ec) || (!fs::is_empty(out, ec) && !ladderThere)))
    return makeError(Errc::InvalidConfig, "--out " + out.string() + ": " + describeFolder(out) +
                                              ", neither empty nor a ladder to continue (no " + proto::kPairsFile + " or " +
                                              proto::kPlanFile + "): choose a new one");
  fs::create_directories(out / "runs", ec);
  if (ec) return makeError(Errc::Io, "--out " + out.string() + ": cannot create it: " + ec.message());
  return out;
}

// This machine's capabilities, or another's (`capabilities --json` there) for a plan that is only printed.
Result<json> machineOf(const LadderCliOptions& o) {
  if (o.capabilities.empty()) return train::capabilitiesJson();
  if (!o.dry_run)
    return makeError(Errc::InvalidConfig, "--capabilities plans for another machine and needs --dry-run: a ladder runs on the machine it measures");
  auto doc = proto::readJsonFile(o.capabilities);
  if (!doc.ok()) return makeError(Errc::InvalidConfig, "--capabilities: " + doc.error().message);
  if (!doc->is_object() || !doc->contains("speedups"))
    return makeError(Errc::InvalidConfig, "--capabilities " + o.capabilities +
                                              ": not a capabilities document (no \"speedups\"); write one with `workbench-cli capabilities --json`");
  return *doc;
}

int ladderCommand(const LadderCliOptions& o) {
  auto config = resolveConfig(o.experiment);
  if (!config.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: invalid config:\n%s\n", config.error().message.c_str());
    return kExitUsage;
  }
  auto caps = machineOf(o);
  if (!caps.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", caps.error().message.c_str());
    return kExitUsage;
  }
  probe::attachProbe(*caps, probe::loadProbe(*config));  // the workers step's count, when probed
  auto plan = ladder::planForMachine(*config, *caps, {o.isolated, o.lr_scaling, o.steps},
                                     [](const Config& c) { return train::machineConfigErrors(c, 1); });
  if (!plan.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", plan.error().message.c_str());
    return kExitUsage;
  }
  const experiment::UserCommand userCommand = userCommandOf(o.user_command, o.experiment);
  ladder::skipUnmeasurable(*plan, userCommand, !o.cumulative);
  if (o.dry_run) {
    printPlan(*plan);
    return 0;
  }
  if (o.exec.slurm()) {
    const auto baseline = std::find_if(plan->begin(), plan->end(), [](const ladder::LadderStep& s) { return s.key == "baseline"; });
    if (const int rc = byParts(o) && baseline != plan->end() ? referencesOnSlurm(o.exec, baseline->config, o.parts, kinds::kLadder) : 0; rc != 0)
      return rc;
    return runOnSlurm(o.exec, outPathOf(o), kinds::kLadder);
  }
  auto out = prepareOut(o);
  if (!out.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", out.error().message.c_str());
    return out.error().code == Errc::InvalidConfig ? kExitUsage : kExitFailed;  // another folder's: usage
  }
  installStopSignals();
  const bool continuing = experiment::holdsPairs(*out) || fs::exists(*out / proto::kPlanFile);
  std::fprintf(stderr, "ladder -> %s (%zu steps, %s)%s\n", out->c_str(), plan->size(),
               byParts(o)      ? "greedy steps by parts"
               : o.verdict.repeats > 0 ? (std::to_string(o.verdict.repeats) + " pair(s) each").c_str()
                               : ("pairs until the verdict is clear, at most " + std::to_string(o.verdict.max_pairs) + " each").c_str(),
               continuing ? ", continuing the pairs already there" : "");
  const bool eventsOut = o.events_stdout;
  ladder::LadderOptions lo;
  lo.plan = std::move(*plan);
  lo.out = *out;
  lo.policy = o.verdict.policy();
  lo.hooks = cliHooks(eventsOut);
  lo.greedy = !o.cumulative;
  lo.user_command = userCommand;
  lo.by_parts = byParts(o);
  lo.composed = composedFor(o.parts, o.exec);
  lo.here = ladder::ladderHere(*caps);
  auto result = ladder::runLadder(lo);
  if (!result.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", result.error().message.c_str());
    if (eventsOut) printEvent(proto::toEvent(proto::ErrorEvent{result.error().message, errcName(result.error().code), std::nullopt}, -1, 0.0));
    return result.error().code == Errc::InvalidConfig ? kExitUsage : kExitFailed;  // another plan's folder: usage
  }
  std::FILE* to = eventsOut ? stderr : stdout;
  printAnswer(to, result->ladder.answer, o.details ? ladder::ladderTable(result->ladder) : ladder::ladderAnswerTable(result->ladder),
              o.details);
  std::fprintf(to, "\n");
  if (const ladder::LadderRow* kept = ladder::keptRow(result->ladder); kept && !result->cancelled)
    printWrapped(to, "Run what was kept with `workbench-cli run --config " + (*out / proto::kKeptConfigFile).string() + "`.");
  if (!o.details) printWrapped(to, "Every figure, note and caveat: --details, or " + (*out / "ladder.html").string() + ".");
  std::fprintf(stderr, "wrote %s/ladder.{md,csv,tex,json,html,svg,png} and the runs in %s/%s\n", out->c_str(), out->c_str(),
               o.cumulative ? "runs" : "steps");
  if (result->cancelled)
    std::fprintf(stderr, "ladder %s: the tables hold the pairs that finished; `workbench-cli ladder --out %s` with the same options continues it\n",
                 result->ladder.status_note.c_str(), out->c_str());
  return result->exitCode();
}

}  // namespace

void addLadder(CLI::App& cli, Commands& out) {
  auto o = std::make_shared<LadderCliOptions>();
  CLI::App* ladder = cli.add_subcommand(kinds::kLadder, kAbout);
  addExperimentOptions(*ladder, o->experiment,
                       "the experiment (model, data, epochs...); its speedups are replaced by the ladder's");
  addExecutorOptions(*ladder, o->exec);
  addUserCommandOptions(*ladder, o->user_command);
  ladder->add_option("--out", o->out,
                     "output folder (default <runs-root>/<timestamp>-ladder-<id>): new, empty, or a\n"
                     "ladder cut short, which is continued (its finished pairs are kept)")
      ->type_name("DIR");
  ladder->add_option("--runs-root", o->runs_root,
                     "where the default --out goes (default $WB_RUNS_ROOT or ~/.local/share/speedup-workbench/runs)")
      ->type_name("DIR")->check(utf8Path("--runs-root"));
  o->parts.pair_options.push_back(
      ladder->add_option("--repeats", o->verdict.repeats,
                     "exactly N pairs per step (baseline and step, order alternating), no early\n"
                     "stop (default: adaptive, see --max-pairs); 1 gives no interval")
      ->type_name("N")->check(inRange(1, 100)));
  o->parts.pair_options.push_back(
      ladder->add_option("--max-pairs", o->verdict.max_pairs,
                     "adaptive: pairs are added to a step until its verdict is clear, at most N\n"
                     "(default 5)")
      ->type_name("N")->check(inRange(1, 100)));
  o->parts.pair_options.push_back(
      ladder->add_option("--budget-s", o->verdict.budget_s, "adaptive: no new pair for a step whose pairs took S seconds (default 600)")
      ->type_name("S")->check(inRange(0.0, 1e7)));
  ladder->add_option("--noise-band", o->verdict.noise_band,
                     "a floor for the spread of few pairs, e.g. 0.10 = +/-10 % (default: this host's\n"
                     "measured band, else none: the pairs alone carry the noise)")
      ->type_name("F")->check(inRange(0.0, 1.0));
  addMinEffectOption(*ladder, o->verdict.min_effect);
  o->parts.pair_options.push_back(
      ladder->add_option("--rerun-contended", o->verdict.rerun_contended,
                     "a pair measured under contention does not count, one the host speed check flagged is set aside; up to N more pairs replace such pairs (default 1)")
      ->type_name("N")->check(inRange(0, 10)));
  std::string keys;
  for (const Speedup& sp : speedupTable()) keys += (keys.empty() ? "" : ", ") + std::string(sp.key);
  ladder->add_option("--steps", o->steps,
                     "run only these steps besides the baseline (" + keys + ");\n"
                     "the others are listed as left out. Each step keeps its place in the recipe's order")
      ->type_name("KEY,...");
  addByPartsOptions(*ladder, o->parts, "every greedy step");
  ladder->add_flag("--isolated", o->isolated, "also run each speedup alone against the baseline");
  ladder->add_flag("--cumulative", o->cumulative,
                   "each step builds on the one before whatever it measured, paired with the baseline\n"
                   "(the default is greedy: each step against the configuration kept so far)");
  ladder->add_option("--lr-scaling", o->lr_scaling,
                     "the steps on more than one device train with optim.lr_scaling=M\n"
                     "(lr x devices or x sqrt(devices), after a short warm-up), so the devices step\n"
                     "reaches the baseline's accuracy in the same epochs (default: the config's\n"
                     "when it scales, else linear for SGD and sqrt for Adam/AdamW; none: no scaling)")
      ->type_name("M")->check(oneOf(lrScalingChoices()));
  ladder->add_option("--target-acc", o->verdict.target_acc,
                     "target val accuracy: 0.85, 85 or 85% (default: the lowest best val acc of the baseline's repeats)")
      ->type_name("X")->check(checkedBy([](const std::string& t) { return statusOf(compare::parseTargetAccuracy(t)); }, ""));
  ladder->add_flag("--dry-run", o->dry_run, "print the plan and exit");
  addDetailsFlag(*ladder, o->details);
  ladder->add_option("--capabilities", o->capabilities,
                     "with --dry-run: plan for the machine this file describes (`workbench-cli\n"
                     "capabilities --json` run there, e.g. a GPU node) instead of this one")
      ->type_name("FILE");
  ladder->add_flag("--events-stdout", o->events_stdout,
                   "JSON Lines on stdout instead of the table: `ladder` (the plan and --out),\n"
                   "`rung_start` / `rung_end` per run, `pair_end` per pair, `warning`, `error`,\n"
                   "and `end` (status and the ladder's result, as ladder.json holds it); see wb/ladder/ladder_run.h");
  ladder->footer(kFooter);
  out.push_back({ladder, [o] { return ladderCommand(*o); }});
}

}  // namespace wb::cli
