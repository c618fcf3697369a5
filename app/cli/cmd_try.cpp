// workbench-cli try: option parsing over wb/experiment/try.h (one variant against its baseline,
// as pairs through the runner); prints its table or, with --events-stdout, its events.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "answer_out.h"
#include "commands.h"
#include "command_setup.h"
#include "slurm_exec.h"
#include "wb/common/exit_codes.h"
#include "wb/common/paths.h"
#include "wb/data/dataset.h"
#include "wb/experiment/composed_try.h"
#include "wb/experiment/try.h"
#include "wb/experiment/try_method.h"
#include "wb/proto/event_types.h"
#include "wb/proto/experiment_events.h"
#include "wb/proto/events.h"
#include "wb/compare/compare.h"
#include "wb/records/host.h"
#include "wb/proto/run_status.h"
#include "wb/proto/record_files.h"
#include "wb/kinds/experiment_kinds.h"

namespace wb::cli {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kAbout = R"(one change against its baseline: the speedup to the target accuracy, its interval and verdict

Which method: the cheaper of the two for the same precision, unless one is asked for (--whole-runs
or an option of pairs; --by-parts or an option of by parts), said on stderr and in try.json
(method_reason): a change that keeps the training's math goes by parts (one process times it); one
that changes it too once the experiment has reference runs; without them, in whole runs when they
evaluate often enough to know their time to target closely (else by parts: a run evaluated once
knows it only as "by the end"). --which-method says which and why, running nothing.

By parts (for a change of the steps: precision, loader workers, pin memory, devices,
sharding, the batch and the levers past the recipe, with or without the optimiser's numbers; of
the evaluation: inference-mode eval, the evaluation batch; and of early stopping):
time to target = start-up + samples to target / train throughput + evaluations x evaluation
time, each part measured where it is cheap and precise: whether the change keeps the training's
math (`probe math`: the first steps' losses from one seed, seconds; devices, sharding and early
stopping, which one process cannot check, are said so without starting one), the throughput (`probe
segments`: interleaved segments in one process for precision, workers, pin memory, channels-last,
the multi-tensor step, cuDNN autotune and TF32; else short interleaved trials, whole processes cut
at 300 steps, 3 pairs), the evaluation time when it changes (evaluations interleaved in one
process), early stopping replayed on the reference runs' evaluations, and, when the math changes, the
samples to target: the experiment's reference runs (--reference-runs of the baseline, each its own
seed, kept in --references and reused by every later try) against as many runs of the variant that
each stop at the target (or at 3x the reference's samples). A change that keeps the math needs no
run to the target. The table shows the split ("1.31x faster to target: 1.45x throughput, 0.90x
samples to target").

Whole runs (--whole-runs, and a change that cannot be taken apart, e.g. train.epochs or your own
--command): the baseline and the variant as pairs of whole
`workbench-cli run`s, close in time and in alternating order; the speedup on time to the target,
training throughput and wall time is the geometric mean of the pairs' ratios with its interval.
Pairs are added until the verdict is clear (at most --max-pairs, --budget-s), or exactly --repeats.
Each pair trains its own seed (pair N the N-th reference run's), both its runs the same, so their
interval holds the seed's noise as by parts' does.

Either way "faster" or "slower" only when the interval excludes 1 and the estimate is beyond
--min-effect (2 %), else "within noise"; the false-alarm rate is 5 %. The target accuracy is one for
both methods: the experiment's reference runs' lowest best less its chance spread, or, in whole runs
before it has any, the pairs' baseline runs' (the table says which). A --vary that changes nothing is an
A/A check of this machine's noise. With --command, every run is your own training script (its
recorder writes the run folder) with the arm's settings, in whole runs.

Writes into --out: try.json (the result) and what was measured (math.json, segments.json, runs/;
pairs.json for whole runs). Run again on the same --out, a cut try continues.)";

const char* kFooter = R"(
Exit codes: 0 ok, 1 a run failed, 2 bad config or usage, 130 cancelled.)";

struct TryCliOptions {
  ExperimentOptions experiment;
  ExecutorOptions exec;
  experiment::UserCommand user_command;
  std::string variant_command;  // "": the variant runs what the baseline runs
  std::vector<std::string> vary;
  std::string variant_config, label, speedup, out, runs_root;
  VerdictCliOptions verdict;
  bool events_stdout = false, json = false, details = false, which_method = false;
  ByPartsOptions parts;  // by parts unless whole runs are asked for (an option of pairs too)
};

std::string settingOf(const std::vector<std::string>& vary) {
  std::string s;
  for (const auto& v : vary) s += (s.empty() ? "" : ", ") + v;
  return s;
}

// The method and why: whole runs when asked (--whole-runs, or an option of pairs), when the folder
// is a whole-run try to continue, or when the change cannot be measured by parts; by parts when
// asked (--by-parts, or an option of its own) or continued; else the cheaper for the same
// precision (experiment::chooseMethod), from the experiment's stored reference runs (`stored`).
struct Method {
  bool whole = false;
  std::string reason;
};
Method methodOf(const TryCliOptions& o, const experiment::TryOptions& t, const std::vector<records::RunRecord>& stored) {
  if (!o.parts.byParts()) return {true, "asked for (--whole-runs or an option of whole runs)"};
  if (experiment::holdsPairs(t.out)) return {true, "the folder holds a try in whole runs, which this continues"};
  if (const std::string why = experiment::composedUnavailable(t); !why.empty()) return {true, why};
  std::error_code ec;
  if (o.parts.askedByParts()) return {false, "asked for (--by-parts or an option of by parts)"};
  if (fs::exists(t.out / "parts", ec)) return {false, "the folder holds a try by parts, which this continues"};
  const auto choice = experiment::chooseMethod(
      experiment::methodInputsOf(t, stored, o.parts.composed.reference_runs, o.parts.composed.variant_runs));
  return {!choice.by_parts, "chosen, " + choice.reason};
}

// A try by parts cut by Ctrl-C or SIGTERM: what it measured is kept, try.json says cancelled, and
// the end event carries it (the window follows the folder from it).
int cutByParts(const TryCliOptions& o, const experiment::TryOptions& t, const std::string& why) {
  std::fprintf(stderr, "try cancelled (%s): what was measured is kept in %s; the same command continues it\n", why.c_str(),
               t.out.c_str());
  if (o.events_stdout) {
    const proto::StoredRecord doc = records::readStored(t.out / proto::kTryFile);
    if (doc.unreadable())
      std::fprintf(stderr, "try: %s/%s is unreadable: %s; the end event carries no result\n", t.out.c_str(), proto::kTryFile, doc.why.c_str());
    const std::string answer = doc.doc.is_object() ? doc.doc.value("answer", std::string()) : std::string();
    printEvent(proto::toEvent(proto::TryEndEvent{proto::kStatusCancelled, t.out.string(), doc.doc, answer}, -1, 0.0));
  }
  return kExitCancelled;
}

// --which-method: the method and why, nothing run.
int printMethod(const TryCliOptions& o, const Method& m) {
  if (o.json) std::printf("%s\n", json{{"method", m.whole ? "whole-runs" : "composed"}, {"method_reason", m.reason}}.dump(2).c_str());
  else std::printf("%s: %s\n", m.whole ? "Whole runs in pairs" : "By parts", m.reason.c_str());
  return 0;
}

int tryCommand(const TryCliOptions& o) {
  if (o.vary.empty() && o.variant_config.empty() && o.variant_command.empty()) {
    std::fprintf(stderr, "workbench-cli try: say what the variant changes: --vary KEY=VALUE, --variant-config FILE or --variant-command TEMPLATE\n");
    return kExitUsage;
  }
  auto arms = resolveArms(o.experiment, o.vary, o.variant_config);
  if (!arms.ok()) {
    std::fprintf(stderr, "workbench-cli try: invalid config:\n%s\n", arms.error().message.c_str());
    return kExitUsage;
  }
  experiment::TryOptions t;
  t.baseline = arms->baseline;
  t.variant = arms->variant;
  t.speedup = o.speedup;
  t.setting = !o.label.empty()            ? o.label
              : !o.vary.empty()             ? settingOf(o.vary)
              : !o.variant_config.empty()   ? "the config of " + o.variant_config
                                            : "`" + o.variant_command + "`";
  t.out = o.out.empty() ? fs::path(o.runs_root.empty() ? defaultRunsRoot() : fs::path(o.runs_root)) / makeRunId(kinds::kTry)
                        : fs::path(o.out);
  std::error_code ec;
  t.out = fs::absolute(t.out, ec);
  if (!experiment::usableTryFolder(t.out, {o.experiment.config, o.variant_config})) {
    std::fprintf(stderr,
                 "workbench-cli try: --out %s: exists and is neither an empty folder, a try to continue nor a folder "
                 "holding only this try's configs: give a new --out\n",
                 t.out.c_str());
    return kExitFailed;
  }
  if (o.exec.slurm()) {
    const bool references = o.parts.byParts() && !experiment::holdsPairs(t.out) &&
                            experiment::composedUnavailable(t).empty() && experiment::referenceRunsExpected(t);
    if (const int rc = references ? referencesOnSlurm(o.exec, t.baseline, o.parts, kinds::kTry) : 0; rc != 0) return rc;
    return runOnSlurm(o.exec, t.out, kinds::kTry);
  }
  t.policy = o.verdict.policy();
  t.user_command = userCommandOf(o.user_command, o.experiment);
  if (!o.variant_command.empty())
    t.variant_command = experiment::UserCommand{o.variant_command == "workbench" ? std::string() : o.variant_command,
                                                t.user_command.idle_timeout_s};
  installStopSignals();
  const experiment::Hooks hooks = cliHooks(o.events_stdout);
  // The experiment's stored reference runs: their target is the try's by either method, and what
  // they cost says which method is cheaper.
  const std::vector<records::RunRecord> stored =
      t.user_command.set() || t.variant_command
          ? std::vector<records::RunRecord>{}
          : experiment::storedReferenceRuns(o.parts.resolved().references, t.baseline, data::datasetFingerprint(t.baseline.data.dataset));
  const Method method = methodOf(o, t, stored);
  t.method_reason = method.reason;
  if (o.which_method) return printMethod(o, method);
  std::fprintf(stderr, "try -> %s: %s against the baseline\n", t.out.c_str(), t.setting.c_str());
  std::fprintf(stderr, "try: %s: %s\n", method.whole ? "whole runs in pairs" : "by parts", method.reason.c_str());
  if (method.whole) t.reference_runs = stored;
  auto result = method.whole ? experiment::runTry(t, hooks) : experiment::runComposedTry(t, composedFor(o.parts, o.exec), hooks);
  if (!result.ok() && result.error().code == Errc::Cancelled) return cutByParts(o, t, result.error().message);
  if (!result.ok()) {
    std::fprintf(stderr, "workbench-cli try: %s\n", result.error().message.c_str());
    if (o.events_stdout) printEvent(proto::toEvent(proto::ErrorEvent{result.error().message, errcName(result.error().code), std::nullopt}, -1, 0.0));
    return result.error().code == Errc::InvalidConfig ? kExitUsage : kExitFailed;
  }
  if (o.events_stdout)
    printEvent(proto::toEvent(proto::TryEndEvent{result->doc.value("status", ""), t.out.string(), result->doc, result->doc.value("answer", std::string())}, -1, 0.0));
  else if (o.json)
    std::printf("%s\n", result->doc.dump(2).c_str());
  else {
    const proto::TryRecord record = proto::tryRecordFromJson(result->doc);
    printAnswer(stdout, record.answer,
                o.details ? experiment::tryTable(result->doc) : experiment::tryAnswerTable(record), o.details);
  }
  std::fprintf(stderr, "wrote %s/%s and the runs in %s/runs\n", t.out.c_str(), proto::kTryFile, t.out.c_str());
  return result->exitCode();
}

}  // namespace

void addTry(CLI::App& cli, Commands& out) {
  auto o = std::make_shared<TryCliOptions>();
  CLI::App* t = cli.add_subcommand(kinds::kTry, kAbout);
  addExperimentOptions(*t, o->experiment, "the baseline experiment (default: Fashion-MNIST, lenet)");
  addExecutorOptions(*t, o->exec);
  t->add_option("--vary", o->vary, "KEY=VALUE: what the variant changes (like --set; repeat it for more)")
      ->type_name("KEY=VALUE")->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  t->add_option("--variant-config", o->variant_config,
                "the variant's own config (then the --set and --vary apply to it); what the window passes")
      ->type_name("FILE")->check(utf8Path("--variant-config"));
  addUserCommandOptions(*t, o->user_command);
  t->add_option("--variant-command", o->variant_command,
                "the variant's runs are this command instead (same placeholders), e.g. the baseline's training written in "
                "Lightning: the comparison is then of whole pipelines; `workbench` for the workbench's own runs")
      ->type_name("TEMPLATE");
  t->add_option("--label", o->label, "what the variant changes, in words (default: the --vary list)")->type_name("TEXT");
  t->add_option("--speedup", o->speedup, "the speedup this tries (workers, precision, ...), kept in try.json for the window")
      ->type_name("KEY");
  t->add_option("--out", o->out, "output folder (default <runs-root>/<timestamp>-try-<id>): new, empty, or a try to continue")
      ->type_name("DIR");
  t->add_option("--runs-root", o->runs_root, "where the default --out goes")->type_name("DIR")->check(utf8Path("--runs-root"));
  addByPartsOptions(*t, o->parts, "the change");
  o->parts.parts_options.push_back(t->add_flag("--by-parts", "measure by parts, whatever is cheaper (default: the cheaper method for\n"
                                                "the same precision, said on stderr and in try.json's method_reason)"));
  t->add_flag("--which-method", o->which_method, "say which method would measure this try and why, and run nothing");
  o->parts.parts_options.push_back(t->add_flag("--only-faster", o->parts.composed.futility,
              "by parts (whole runs ignore it): ask only whether the change is faster (the ladder's question),\n"
              "not by how much: the variant's runs and the segments' rounds stop once it cannot be shown faster,\n"
              "and a larger global batch too slow to be faster even needing no more samples than the baseline\n"
              "is answered by that bound, without runs to the target"));
  o->parts.pair_options.push_back(
      t->add_option("--repeats", o->verdict.repeats, "whole runs: exactly N pairs, no early stop (default: adaptive)")->type_name("N")->check(inRange(1, 100)));
  o->parts.pair_options.push_back(
      t->add_option("--max-pairs", o->verdict.max_pairs, "whole runs: at most N pairs (default 5)")->type_name("N")->check(inRange(1, 100)));
  o->parts.pair_options.push_back(t->add_option("--budget-s", o->verdict.budget_s, "whole runs: no new pair once the pairs took S seconds (default 600)")
      ->type_name("S")->check(inRange(0.0, 1e7)));
  t->add_option("--noise-band", o->verdict.noise_band,
                "a floor for the spread of few pairs, e.g. 0.10 = +/-10 % (default: this host's measured\n"
                "band, else none: the pairs alone carry the noise)")
      ->type_name("F")->check(inRange(0.0, 1.0));
  addMinEffectOption(*t, o->verdict.min_effect);
  o->parts.pair_options.push_back(t->add_option("--rerun-contended", o->verdict.rerun_contended,
                                          "whole runs: up to N more pairs replace pairs measured under contention or set aside by the host speed check (default 1)")
      ->type_name("N")->check(inRange(0, 10)));
  t->add_option("--target-acc", o->verdict.target_acc, "target val accuracy: 0.85, 85 or 85% (default: the lowest best of the baseline's runs\nless its chance spread)")
      ->type_name("X")->check(checkedBy([](const std::string& x) { return statusOf(compare::parseTargetAccuracy(x)); }, ""));
  t->add_flag("--events-stdout", o->events_stdout,
              "JSON Lines on stdout: rung_start / rung_end per run, pair_end per pair, then end\n"
              "(status, out_dir, result: try.json)");
  t->add_flag("--json", o->json, "print try.json instead of the answer and its table");
  addDetailsFlag(*t, o->details);
  t->footer(kFooter);
  out.push_back({t, [o] { return tryCommand(*o); }});
}

}  // namespace wb::cli
