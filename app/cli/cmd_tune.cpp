// workbench-cli tune (and tune batch): option parsing over wb/tune (the search and the batch
// finder); the splits' sizes, the machine's capabilities and its free memory come from here.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <variant>
#include <algorithm>

#include "answer_out.h"
#include "commands.h"
#include "command_setup.h"
#include "slurm_exec.h"
#include "wb/common/exit_codes.h"
#include "wb/common/format.h"
#include "wb/common/fs.h"
#include "wb/common/paths.h"
#include "wb/common/sysinfo.h"
#include "wb/data/dataset.h"
#include "wb/ladder/ladder.h"
#include "wb/probe/record.h"
#include "wb/proto/command_template.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/compare/compare.h"
#include "wb/train/machine_capabilities.h"
#include "wb/tune/batch_finder.h"
#include "wb/tune/tune.h"
#include "wb/proto/record_files.h"
#include "wb/kinds/experiment_kinds.h"

namespace wb::cli {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kAbout = R"(finds the configuration that reaches the target accuracy soonest here; writes best.json

Searches what this machine can run: loader workers (the stored `probe workers` count, else
min(cores, 4)), pin memory (CUDA), devices with the lr scaled for the larger global batch, sharding
where devices > 1, precision, the per-rank batch (the batch finder's pick, lr scaled by the rule
and warmed up), inference-mode eval and the evaluation batch. Early stopping is not
searched: it cannot change the time to reach the target.

Cheap trials first: the evaluation settings on the config as given, then every training
candidate for --trial-fraction of an epoch, ranked on the time an epoch would take (train
images / steady training samples/s + val images / evaluation images/s); the fastest 1/--eta (and
any within this host's run-to-run noise of them) go on with --eta times the images, until
--finalists are left (successive halving). Then each finalist is measured against the config as
given by parts, as `workbench-cli try` measures (throughput from segments or short trials, the
evaluation from short trials, and when the math changes runs to the target against the
experiment's reference runs), or with --whole-runs (or --max-pairs) trained to the target as
interleaved pairs; each with its interval and verdict. The best is the fastest to the target,
and the table names those that cannot be told from it.

Writes into --out: tune.json (after every trial and pair), trials/, batch/ (the batch finder),
finals/ (a try folder per finalist, or the pairs), and at the end tune.md, tune.html, best.json (`workbench-cli run --config
best.json`), best-torchrun.sh and best-lightning.py (the same settings for torchrun and
PyTorch Lightning). Cancelled (Ctrl-C, SIGTERM) in any phase, the finished batch sizes, trials
and pairs are kept; `tune --out` on the same folder with the same options continues it. With --command, every trial and final is your
own script (it must take {train.max_steps}); settings it has no placeholder for are not searched,
and best-command.sh is your command with the best's settings.)";

const char* kBatchAbout = R"(the per-rank batch size with the most training throughput here

Steps up from train.batch_size (x1.5 and x4/3 in turn: 64, 96, 128, 192, 256, ...), one short
whole run a size, measuring steady training samples/s and memory (peak RSS on the CPU), and
stops when two sizes in a row gain no more than the noise band, when the next size's memory
would pass the free memory less --margin, or when a trial fails (an allocation failure is the
limit; the search goes on to its answer). The pick is the smallest size within the noise of the
fastest; it trains at the lr scaled by --lr-scaling (optim.lr_base_batch = the base, warmed up),
and one pair of full runs checks that the accuracy held (--no-accuracy-check to skip it).
Writes batch.json, runs/, accuracy/ and best.json into --out.)";

const char* kFooter = R"(
Exit codes: 0 a pick, 1 no pick (every candidate failed) or a run failed, 2 bad config or usage
(an empty search space, a budget too small, a target never reached, an --out that holds another
search or no search at all),
130 cancelled (what finished is kept).)";

struct TuneCliOptions {
  ExperimentOptions experiment;
  ExecutorOptions exec;
  experiment::UserCommand user_command;
  std::string out, runs_root, budget = "10m", lr_scaling, only;
  double trial_fraction = tune::kDefaultTrialFraction, margin = 0.1;
  int eta = tune::kDefaultEta, finalists = tune::kDefaultFinalists, max_batch = 4096;
  VerdictCliOptions verdict{0, 3};  // the finals as pairs: at most 3 each
  bool events_stdout = false, dry_run = false, no_batch = false, no_accuracy_check = false, details = false;
  ByPartsOptions parts;  // the finals by parts unless whole runs are asked for (--max-pairs too)
};

fs::path outOf(const TuneCliOptions& o, const char* kind) {
  fs::path out = o.out.empty() ? fs::path(o.runs_root.empty() ? defaultRunsRoot() : fs::path(o.runs_root)) / makeRunId(kind) : fs::path(o.out);
  std::error_code ec;
  return fs::absolute(out, ec);
}

std::vector<std::string> splitList(const std::string& list) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) out.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

struct Prepared {
  Config config;
  int64_t train_images = 0, val_images = 0;
  json caps;
  experiment::UserCommand user_command;  // --command, else the --config file's
};

// The config, its splits' sizes and the machine; an exit code when something is wrong.
std::variant<Prepared, int> prepare(const TuneCliOptions& o, const char* name) {
  auto config = resolveConfig(o.experiment);
  if (!config.ok()) {
    std::fprintf(stderr, "workbench-cli %s: invalid config:\n%s\n", name, config.error().message.c_str());
    return kExitUsage;
  }
  auto splits = data::openSplits(config->data, config->seed);
  if (!splits.ok()) {
    std::fprintf(stderr, "workbench-cli %s: %s\n", name, splits.error().message.c_str());
    return splits.error().code == Errc::InvalidConfig ? kExitUsage : kExitData;
  }
  Prepared p{*config, (*splits).train->size(), (*splits).val->size(), train::capabilitiesJson(),
             userCommandOf(o.user_command, o.experiment)};
  probe::attachProbe(p.caps, probe::loadProbe(*config));
  return p;
}

tune::BatchOptions batchOptions(const TuneCliOptions& o, const Prepared& p, const fs::path& out) {
  tune::BatchOptions b;
  b.base = p.config;
  b.out = out;
  b.hooks = cliHooks(o.events_stdout);
  b.train_images = p.train_images;
  b.band = std::max(0.03, o.verdict.noise_band >= 0 ? o.verdict.noise_band : experiment::hostFloorBand());
  b.margin = o.margin;
  const bool cuda = p.caps.value("cuda", false);
  if (const int64_t free = memAvailableBytes(); !cuda && free > 0) b.memory_free = free;
  b.memory_kind = cuda ? "CUDA reserved" : "host RSS";
  b.max_batch = o.max_batch;
  b.lr_rule = o.lr_scaling.empty() ? ladder::defaultLadderLrScaling(p.config.optim) : o.lr_scaling;
  b.policy = o.verdict.policy();
  b.check_accuracy = !o.no_accuracy_check;
  b.user_command = p.user_command;
  return b;
}

int batchCommand(const TuneCliOptions& o) {
  auto prepared = prepare(o, "tune batch");
  if (auto* code = std::get_if<int>(&prepared)) return *code;
  const Prepared& p = std::get<Prepared>(prepared);
  const fs::path out = outOf(o, "batch");
  if (auto st = tune::checkSearchFolder(out, {proto::kBatchFile}); !st.ok()) {
    std::fprintf(stderr, "workbench-cli tune batch: %s\n", st.error().message.c_str());
    return kExitUsage;
  }
  installStopSignals();
  std::fprintf(stderr, "tune batch -> %s: from batch %d per rank\n", out.c_str(), p.config.train.batch_size);
  auto r = tune::findBatch(batchOptions(o, p, out));
  if (!r.ok()) {
    std::fprintf(stderr, "workbench-cli tune batch: %s\n", r.error().message.c_str());
    return r.error().code == Errc::InvalidConfig ? kExitUsage : kExitFailed;
  }
  const auto& b = r->record;
  std::printf("batch: %d per rank (from %d; %s)\n%s\n", b.chosen, b.base, b.stopped.c_str(), b.lr_note.c_str());
  if (r->cancelled) {
    std::fprintf(stderr, "tune batch cancelled: the sizes measured are in %s/%s; `tune batch --out %s` continues\n", out.c_str(), proto::kBatchFile, out.c_str());
    return kExitCancelled;
  }
  Config chosen = r->chosen;
  chosen.name += " (batch " + std::to_string(b.chosen) + ")";
  if (auto st = writeFileAtomic(out / proto::kBestConfigFile, proto::configToJson(chosen).dump(2) + "\n"); !st.ok()) {
    std::fprintf(stderr, "workbench-cli tune batch: %s\n", st.error().message.c_str());
    return kExitFailed;
  }
  std::printf("run it with `workbench-cli run --config %s/%s`\n", out.c_str(), proto::kBestConfigFile);
  return kExitOk;
}

// tune's batch dimension into t.batches: the base's size and the finder's pick (in out/batch, no
// accuracy check: the finals check it). An exit code when the finder failed or was cut.
std::optional<int> findBatchesFor(const TuneCliOptions& o, const Prepared& p, tune::TuneOptions& t) {
  t.batches = {p.config.train.batch_size};
  const std::vector<std::string> only = splitList(o.only);
  const bool commandTakesBatch = !p.user_command.set() || proto::commandReads(p.user_command.text, "train.batch_size");
  if (o.no_batch || !commandTakesBatch || (!only.empty() && std::find(only.begin(), only.end(), "batch") == only.end())) return std::nullopt;
  tune::BatchOptions b = batchOptions(o, p, t.out / proto::kBatchFolder);
  b.check_accuracy = false;
  auto r = tune::findBatch(b);
  if (!r.ok()) {
    std::fprintf(stderr, "workbench-cli tune: the batch finder: %s\n", r.error().message.c_str());
    return r.error().code == Errc::InvalidConfig ? kExitUsage : kExitFailed;
  }
  if (r->cancelled) {
    std::fprintf(stderr, "tune cancelled in the batch finder: the sizes measured are in %s; "
                         "`workbench-cli tune --out %s` with the same options continues it\n",
                 (t.out / proto::kBatchFolder / proto::kBatchFile).c_str(), t.out.c_str());
    return kExitCancelled;
  }
  t.batch = r->record;
  if (r->record.chosen != t.batches.front()) t.batches.push_back(r->record.chosen);
  return std::nullopt;
}

void printDimensions(const tune::Space& s) {
  for (const auto& d : s.dimensions) {
    std::string values;
    for (const auto& v : d.values) values += (values.empty() ? "" : ", ") + v;
    std::printf("%-36s %s%s\n", d.key.c_str(), d.searched ? values.c_str() : "not searched", d.note.empty() ? "" : ("  (" + d.note + ")").c_str());
  }
  std::printf("%zu evaluation candidate(s), %zu training candidate(s)\n", s.eval.size(), s.train.size());
}

int tuneCommand(const TuneCliOptions& o) {
  auto prepared = prepare(o, kinds::kTune);
  if (auto* code = std::get_if<int>(&prepared)) return *code;
  const Prepared& p = std::get<Prepared>(prepared);
  tune::TuneOptions t;
  t.base = p.config;
  t.only = splitList(o.only);
  t.lr_rule = o.lr_scaling.empty() ? ladder::defaultLadderLrScaling(p.config.optim) : o.lr_scaling;
  auto plan = ladder::planForMachine(p.config, p.caps, {false, o.lr_scaling, ""},
                                     [](const Config& c) { return train::machineConfigErrors(c, 1); });
  if (!plan.ok()) {
    std::fprintf(stderr, "workbench-cli tune: %s\n", plan.error().message.c_str());
    return kExitUsage;
  }
  t.plan = *plan;
  t.batches = {p.config.train.batch_size};
  t.train_images = p.train_images, t.val_images = p.val_images;
  if (o.dry_run) {
    printDimensions(tune::buildSpace(t));
    return kExitOk;
  }
  t.out = outOf(o, kinds::kTune);
  const std::string batchRecord = (fs::path(proto::kBatchFolder) / proto::kBatchFile).string();
  if (auto st = tune::checkSearchFolder(t.out, {proto::kTuneFile, batchRecord}); !st.ok()) {
    std::fprintf(stderr, "workbench-cli tune: %s\n", st.error().message.c_str());
    return kExitUsage;
  }
  if (o.exec.slurm()) {
    if (const int rc = referencesOnSlurm(o.exec, p.config, o.parts, kinds::kTune); rc != 0) return rc;
    return runOnSlurm(o.exec, t.out, kinds::kTune);
  }
  t.budget_s = parseDuration(o.budget, "--budget").value();  // checked while parsing
  t.trial_fraction = o.trial_fraction, t.eta = o.eta, t.finalists = o.finalists;
  t.policy = o.verdict.policy();
  t.by_parts = o.parts.byParts();
  t.composed = composedFor(o.parts, o.exec);
  t.hooks = cliHooks(o.events_stdout);
  t.user_command = p.user_command;
  installStopSignals();
  std::fprintf(stderr, "tune -> %s (budget %s)\n", t.out.c_str(), wb::fmtSeconds(t.budget_s).c_str());
  if (auto code = findBatchesFor(o, p, t)) return *code;
  auto r = tune::runTune(t);
  if (!r.ok()) {
    std::fprintf(stderr, "workbench-cli tune: %s\n", r.error().message.c_str());
    if (o.events_stdout) printEvent(proto::toEvent(proto::ErrorEvent{r.error().message, errcName(r.error().code), std::nullopt}, -1, 0.0));
    return r.error().code == Errc::InvalidConfig ? kExitUsage : kExitFailed;
  }
  std::FILE* to = o.events_stdout ? stderr : stdout;
  printAnswer(to, r->record.answer, o.details ? tune::finalsTable(r->record) : tune::tuneAnswerTable(r->record), o.details);
  std::fprintf(to, "\n");
  if (r->cancelled)
    std::fprintf(stderr, "tune cancelled: the finished trials and pairs are in %s; `workbench-cli tune --out %s` with the same options continues it\n",
                 t.out.c_str(), t.out.c_str());
  else if (!r->record.best.empty() && t.user_command.set())
    printWrapped(to, "Your command with the best's settings: " + (t.out / "best-command.sh").string() + ".");
  else if (!r->record.best.empty())
    printWrapped(to, "Run the best with `workbench-cli run --config " + (t.out / proto::kBestConfigFile).string() +
                         "` (torchrun: best-torchrun.sh, Lightning: best-lightning.py).");
  if (!o.details) printWrapped(to, "The finals in full: --details; every trial: " + (t.out / "tune.html").string() + ".");
  return r->exitCode();
}

void addTuneOptions(CLI::App& t, TuneCliOptions& o) {
  addExperimentOptions(t, o.experiment, "the experiment as given (default: Fashion-MNIST, lenet): the finals' reference");
  addUserCommandOptions(t, o.user_command);
  t.add_option("--out", o.out, "output folder (default <runs-root>/<timestamp>-<kind>-<id>): new, empty, or a search to continue")
      ->type_name("DIR")->check(utf8Path("--out"));
  t.add_option("--runs-root", o.runs_root, "where the default --out goes")->type_name("DIR")->check(utf8Path("--runs-root"));
  t.add_option("--lr-scaling", o.lr_scaling,
               "the lr rule for a larger global batch (more devices or a larger batch): linear | sqrt | none\n"
               "(default: the config's when it scales, else linear for SGD and sqrt for Adam/AdamW)")
      ->type_name("M")->check(oneOf(lrScalingChoices()));
  t.add_option("--noise-band", o.verdict.noise_band, "this host's run-to-run noise as a share (default: the measured band, else 3 %)")
      ->type_name("F")->check(inRange(0.0, 1.0));
  t.add_option("--target-acc", o.verdict.target_acc, "target val accuracy: 0.85, 85 or 85% (default: the config as given's best less its chance spread)")
      ->type_name("X")->check(checkedBy([](const std::string& x) { return statusOf(compare::parseTargetAccuracy(x)); }, ""));
  t.add_option("--margin", o.margin, "share of the free memory the batch finder keeps free (default 0.1)")->type_name("F")->check(inRange(0.0, 0.9));
  t.add_option("--max-batch", o.max_batch, "the batch finder's largest per-rank size (default 4096)")->type_name("N")->check(inRange(1, 1 << 20));
  t.add_flag("--events-stdout", o.events_stdout, "JSON Lines on stdout: tune, trial_end per trial, rung_start/rung_end/pair_end of the finals, end");
}

}  // namespace

void addTune(CLI::App& cli, Commands& out) {
  auto o = std::make_shared<TuneCliOptions>();
  CLI::App* t = cli.add_subcommand(kinds::kTune, kAbout);
  t->require_subcommand(0, 1);
  addTuneOptions(*t, *o);
  addExecutorOptions(*t, o->exec);
  t->add_option("--budget", o->budget, "wall time for the whole search: 90s, 10m, 1h (default 10m)")
      ->type_name("TIME")->check(checkedBy([](const std::string& b) { return statusOf(parseDuration(b, "--budget")); }, ""));
  std::string names;
  for (const auto& n : tune::dimensionNames()) names += (names.empty() ? "" : ", ") + n;
  t->add_option("--only", o->only,
                "search only these: " + names + " (the others keep the config's values;\n"
                "levers, one at a time, is searched only when named)")
      ->type_name("KEY,...")->check(checkedBy([names](const std::string& list) -> Status {
        for (const auto& k : splitList(list))
          if (std::find(tune::dimensionNames().begin(), tune::dimensionNames().end(), k) == tune::dimensionNames().end())
            return makeError(Errc::InvalidConfig, "--only: unknown '" + k + "' (" + names + ")");
        return {};
      }, ""));
  t->add_option("--trial-fraction", o->trial_fraction, "share of an epoch the first round's trials train (default 0.05)")
      ->type_name("F")->check(inRange(0.001, 1.0));
  t->add_option("--eta", o->eta, "successive halving's factor: the fastest 1/eta go on with eta times the images (default 3)")
      ->type_name("N")->check(inRange(2, 10));
  t->add_option("--finalists", o->finalists, "configurations measured against the config as given (default 2)")->type_name("N")->check(inRange(1, 8));
  o->parts.pair_options.push_back(t->add_option("--max-pairs", o->verdict.max_pairs, "the finals as pairs of whole runs, at most N per finalist (default 3)")
                           ->type_name("N")->check(inRange(1, 100)));
  addByPartsOptions(*t, o->parts, "each finalist");
  addMinEffectOption(*t, o->verdict.min_effect);
  t->add_flag("--no-batch", o->no_batch, "keep train.batch_size (no batch finder)");
  t->add_flag("--dry-run", o->dry_run, "print the search space and exit");
  addDetailsFlag(*t, o->details);
  t->footer(kFooter);
  out.push_back({t, [o] { return tuneCommand(*o); }});

  auto b = std::make_shared<TuneCliOptions>();
  CLI::App* batch = t->add_subcommand("batch", kBatchAbout);
  addTuneOptions(*batch, *b);
  batch->add_flag("--no-accuracy-check", b->no_accuracy_check, "skip the pair of full runs that checks the accuracy held");
  batch->footer(kFooter);
  out.push_back({batch, [b] { return batchCommand(*b); }});
}

}  // namespace wb::cli
