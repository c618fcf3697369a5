// `try` by parts: the math check, segments, reference runs and the variant's runs to the target,
// composed into the time to target (composed_try.h).
#include "wb/experiment/composed_try.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <thread>

#include "wb/common/fs.h"
#include "wb/common/lr_scaling.h"
#include "wb/common/speedups.h"
#include "composed_speed.h"
#include "composed_words.h"
#include "wb/launch/tool_run.h"
#include "wb/proto/config_json.h"
#include "wb/proto/cluster_jobs.h"
#include "wb/proto/experiment_events.h"
#include "wb/proto/run_status.h"
#include "wb/compare/compare.h"
#include "wb/stats/estimate_json.h"
#include "wb/records/host.h"
#include "wb/records/math_record.h"
#include "wb/records/speed_record.h"
#include "wb/stats/time_to_target_json.h"
#include "wb/stats/variant_looks.h"
#include "wb/report/whatif.h"
#include "wb/proto/record_files.h"

namespace wb::experiment {
namespace fs = std::filesystem;
using nlohmann::json;
using detail::Changes;
using detail::Part;
using detail::changesOf;

bool referenceRunsExpected(const TryOptions& o) {
  const Changes c = changesOf(o);
  if (c.has(Part::Replay) || c.has(Part::MathOnly) || !c.unknown.empty()) return true;
  for (const auto& [part, paths] : c.parts)
    for (const auto& path : paths) {
      const Speedup* s = speedupOfField(path);
      if (!s || s->math.math != Math::Keeps) return true;
    }
  return false;
}

bool samplesNeverFewer(const TryOptions& o) {
  static const std::set<std::string> kBatchFields{"speedups.devices",  "train.batch_size",  "speedups.grad_accumulation",
                                                  "optim.lr",          "optim.lr_scaling",  "optim.lr_base_batch",
                                                  "optim.lr_scaling_warmup"};
  const Changes c = changesOf(o);
  if (!c.unknown.empty()) return false;
  for (const auto& [part, paths] : c.parts)
    for (const auto& path : paths)
      if (!kBatchFields.count(path)) return false;
  const double grow = double(samplesPerStep(o.variant)) / double(samplesPerStep(o.baseline));
  const auto lrOf = [](const Config& k) { return lrScaling(k.optim, k.speedups.devices, 0, k.train.batch_size).effective_lr; };
  return grow > 1 && lrOf(o.baseline) > 0 && lrOf(o.variant) <= lrOf(o.baseline) * grow * (1 + 1e-9);
}

namespace {

const char* const kReferencePhase = "the experiment's reference runs";
const char* const kVariantPhase = "the variant's runs to the target";
// The variant's looks' `stopped` when no run started because the throughput was contended.
const char* const kStoppedContended = "contended";

// Whether a variant run's cap sets where it ends: a constant learning rate lets its epochs grow to
// the cap (a schedule would change with them, so its epochs stay and the cap is the configured length).
bool capEndsTheRun(const Config& c, int64_t trainSamples) { return c.optim.schedule == "constant" && trainSamples > 0; }

struct VariantPlan {
  double target = 0, resolution = 0, cap_samples = 0;
  int64_t train_samples = 0;
  bool futile_cap = false;  // each wave's runs stop where they cannot be faster, when before the cap (waveCap)
  int at_once = 1;  // runs side by side after the first (ComposedOptions::variant_parallel)
  RunMany elsewhere;  // set: those after the first go there (ComposedOptions::variant_runs_on)
  int threads = 0;    // the reference runs' train.threads when they shared the cores (referenceThreads)
};

// A variant run to the target: from `seed`, evaluating as often (in samples) as the references,
// stopping at the target or at the cap (capEndsTheRun), on as many threads as they had.
Config variantRunConfig(const TryOptions& o, uint64_t seed, const VariantPlan& p) {
  Config c = o.variant;
  const int64_t global = samplesPerStep(c);
  c.seed = seed;
  c.name = o.variant.name + "-to-target-" + std::to_string(seed);
  c.train.stop_at_accuracy = p.target;
  c.train.eval_every_steps = std::max<int64_t>(1, std::llround(p.resolution / double(global)));
  if (c.train.threads == 0) c.train.threads = p.threads;
  if (capEndsTheRun(c, p.train_samples)) {
    c.train.epochs = std::max(c.train.epochs, int(std::ceil(p.cap_samples / double(p.train_samples))));
    c.train.max_steps = std::max<int64_t>(1, int64_t(std::ceil(p.cap_samples / double(global))));
  }
  return c;
}

// The variant's run from the references' `index`th seed: kept when it finished (in its folder, or
// in <folder>.rerun, where a cluster's array reran a task Slurm ended), else the folder it runs in
// (a folder cut short is left as it is: the run goes to the next name).
struct VariantSlot {
  uint64_t seed = 0;
  fs::path dir;
  std::optional<records::RunRecord> kept;
};
VariantSlot variantSlot(const TryOptions& o, int index) {
  VariantSlot s;
  s.seed = kFirstReferenceSeed + uint64_t(index);
  const std::string stem = "runs/variant-seed-" + std::to_string(s.seed);
  s.dir = o.out / stem;
  std::error_code ec;
  const auto finished = [](const fs::path& dir) {
    auto run = finishedTargetRun(dir);
    return run ? run : finishedTargetRun(dir.string() + ".rerun");
  };
  for (int k = 2; fs::exists(s.dir, ec) && !(s.kept = finished(s.dir)); ++k) s.dir = o.out / (stem + "-r" + std::to_string(k));
  return s;
}

// The variant's run to the target from the references' `index`th seed, the cores shared among
// those side by side when `shared`; a finished one is kept.
Result<records::RunRecord> variantRun(const TryOptions& o, const VariantPlan& p, const Hooks& h, int index, bool shared) {
  if (h.stopRequested()) return makeError(Errc::Cancelled, "the variant's runs to the target were stopped");
  VariantSlot slot = variantSlot(o, index);
  if (slot.kept) return std::move(*slot.kept);
  const uint64_t seed = slot.seed;
  const fs::path& dir = slot.dir;
  if (h.log)
    std::fprintf(h.log, "variant run to the target, seed %llu -> %s%s\n", (unsigned long long)seed, dir.c_str(), progressTime(h).c_str());
  Config c = variantRunConfig(o, seed, p);
  if (shared) c = sharingTheCores(c, p.at_once);
  auto out = launchOne(c, dir, UserCommand{}, h.cli_path, "the variant, seed " + std::to_string(seed));
  if (!out.ok()) return out.error();
  auto run = finishedTargetRun(dir);
  if (!run) return makeError(Errc::Internal, "the variant's run " + dir.string() + " ended " + out->status + ": see its logs");
  return std::move(*run);
}

// The variant's runs `first`, ... (`n` of them) handed at once to where they run (a cluster's job
// array); those finished before are kept. In seed order; a run that did not finish is the error.
Result<std::vector<records::RunRecord>> variantsElsewhere(const TryOptions& o, const VariantPlan& p, const Hooks& h, int first, int n) {
  std::vector<VariantSlot> slots;
  std::vector<ConfigRun> todo;
  for (int i = 0; i < n; ++i) {
    slots.push_back(variantSlot(o, first + i));
    const VariantSlot& s = slots.back();
    if (s.kept) continue;
    if (h.log) std::fprintf(h.log, "variant run to the target, seed %llu -> %s (a task of the array)\n", (unsigned long long)s.seed, s.dir.c_str());
    todo.push_back({variantRunConfig(o, s.seed, p), s.dir,
                    "the variant, seed " + std::to_string(s.seed)});
  }
  auto ends = todo.empty() ? Result<std::vector<ConfigRunEnd>>(std::vector<ConfigRunEnd>{}) : p.elsewhere(todo);
  if (!ends.ok()) return ends.error();
  std::vector<records::RunRecord> runs;
  size_t next = 0;
  for (auto& s : slots) {
    if (s.kept) {
      runs.push_back(std::move(*s.kept));
      continue;
    }
    const ConfigRunEnd& end = (*ends)[next++];
    auto run = finishedTargetRun(end.dir);
    if (!run)
      return makeError(Errc::Internal, "the variant's run " + end.dir.string() + " ended " + end.status +
                                           (end.problem.empty() ? ": see its logs" : ": " + end.problem));
    runs.push_back(std::move(*run));
  }
  return runs;
}

// The variant's runs `first`, `first` + 1, ... (`n` of them): the first of all here and alone, the
// others elsewhere when the plan says where, else side by side here when more than one; in seed
// order. The first error, once all have ended.
Result<std::vector<records::RunRecord>> variantWave(const TryOptions& o, const VariantPlan& p, const Hooks& h, int first, int n) {
  if (p.elsewhere && first > 0) return variantsElsewhere(o, p, h, first, n);
  std::vector<std::optional<Result<records::RunRecord>>> ends(size_t(std::max(1, n)));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back([&, i] { ends[size_t(i)] = variantRun(o, p, h, first + i, n > 1); });
  for (auto& t : threads) t.join();
  std::vector<records::RunRecord> runs;
  for (auto& end : ends) {
    if (!end->ok()) return end->error();
    runs.push_back(std::move(**end));
  }
  return runs;
}

}  // namespace

std::string composedUnavailable(const TryOptions& o) {
  if (o.user_command.set()) return "the runs are your own command (--command): only whole runs measure it";
  if (o.variant_command) return "the variant is another command (--variant-command): only whole runs measure it";
  const Changes c = changesOf(o);
  if (!c.unknown.empty())
    return c.unknown.front() + " is not measured by parts: only a change of the steps, of the evaluation or of early "
                               "stopping is (precision, workers, pin memory, devices, sharding, the batch, the levers "
                               "past the recipe, the optimiser's numbers, inference-mode eval, the evaluation "
                               "batch, early stopping)";
  if (c.has(Part::Replay) && c.parts.size() > 1)
    return "early stopping is replayed on the reference runs' evaluations, which another change would move: try it on its own";
  if (c.has(Part::Replay) && o.baseline.speedups.early_stopping.patience > 0)
    return "the baseline stops early itself, so its reference runs end where it stops: another early stopping cannot be "
           "replayed on them";
  return "";
}

namespace {

double median(std::vector<double> xs) { return xs.empty() ? NAN : stats::median(xs); }

// One value per run (NaN-free) for the log estimates.
template <typename F>
std::vector<double> perRun(const std::vector<records::RunRecord>& runs, F pick) {
  std::vector<double> xs;
  for (const auto& r : runs)
    if (auto v = pick(compare::computeMetrics(r, std::nullopt)); v && std::isfinite(*v) && *v > 0) xs.push_back(*v);
  return xs;
}

std::optional<double> startupOf(const compare::RunMetrics& m) { return m.time_to_first_step_s; }
std::optional<double> rateOf(const compare::RunMetrics& m) { return m.train_samples_per_s; }
std::optional<double> evalOf(const compare::RunMetrics& m) {
  return m.eval_ms ? std::optional<double>(*m.eval_ms / 1000.0) : std::nullopt;
}

// a / b of two arms' log estimates: the logs' standard errors added, the smaller df.
stats::LogEstimate ratioOf(const stats::LogEstimate& a, const stats::LogEstimate& b) {
  stats::LogEstimate r;
  r.value = a.value / b.value;
  r.log_se = std::hypot(a.log_se, b.log_se);
  r.df = std::min(a.df, b.df);
  return r;
}

// The variant's runs' values as a log estimate; from one run, with the spread of one reference
// run borrowed (their mean's standard error × √runs, as the samples borrow theirs:
// report/convergence.h), so the first run can be looked at.
stats::LogEstimate variantOrBorrowed(const std::vector<double>& values, const stats::LogEstimate& reference) {
  stats::LogEstimate e = stats::logEstimateOfRuns(values);
  if (values.size() == 1 && !std::isfinite(e.log_se) && reference.df >= 1 && std::isfinite(reference.df))
    e.log_se = reference.log_se * std::sqrt(reference.df + 1), e.df = reference.df;
  return e;
}

double geometricMean(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += std::log(x);
  return xs.empty() ? NAN : std::exp(s / double(xs.size()));
}

// The baseline's start-up, evaluation time and rate, from the reference runs no other process slowed
// (compare::Contention), as the variant's first run runs alone; from all of them when none ran so (a
// busy machine, or each beside another: --parallel-runs). Side by side on this host's 2 cores,
// lenet's start-up took 1.88 s against 1.67 s alone: the baseline's would be overstated, and any
// variant faster to the target by about 2.5 % of a one-epoch run. One quiet run borrows all's spread.
struct BaselineTiming {
  stats::LogEstimate startup, rate, eval;
  size_t timed = 0, slowed = 0;  // the reference runs they come from; those another process slowed
};
BaselineTiming baselineTiming(const std::vector<records::RunRecord>& runs, const Hooks& h) {
  BaselineTiming t;
  std::vector<records::RunRecord> quiet;
  for (const auto& r : runs)
    if (!compare::computeMetrics(r, std::nullopt).contention.contended) quiet.push_back(r);
  t.slowed = runs.size() - quiet.size();
  const auto& timed = quiet.empty() ? runs : quiet;
  t.timed = timed.size();
  const auto estimate = [&](auto pick) { return variantOrBorrowed(perRun(timed, pick), stats::logEstimateOfRuns(perRun(runs, pick))); };
  t.startup = estimate(startupOf), t.rate = estimate(rateOf), t.eval = estimate(evalOf);
  if (h.log && t.timed < runs.size())
    std::fprintf(h.log, "the baseline's start-up, evaluation time and rate: from the %zu of %zu reference runs no other process slowed\n",
                 t.timed, runs.size());
  return t;
}

struct Inputs {
  Changes changes;
  records::MathCheckRecord math;
  records::SpeedRecord segments;                 // the training's throughput (segments, trials or unchanged)
  std::optional<records::SpeedRecord> evaluation;  // the evaluation's time, when the evaluation changes
  bool keeps = true;
  int64_t train_samples = 0;
  std::optional<ReferenceRuns> refs;
  BaselineTiming baseline;  // from the reference runs (baselineTiming), once
  std::optional<double> target;
  TryTarget target_rule;  // the target and what it is from
  std::vector<records::RunRecord> variant;
  size_t timed_variant_runs = SIZE_MAX;  // those whose start-up and evaluation count: the first, when the others ran side by side
  stats::SamplesComparison samples;
  stats::VerdictRule rule;  // the composed verdict's: the variant's last look's when its runs were looked at
  json looks;       // the variant's runs' looks: {max_runs, runs, stopped}
  bool samples_assumed = false;  // a larger global batch only: its samples bounded, not run (samplesNeverFewer)
  bool samples_not_run = false;  // futility and a contended throughput: no verdict, no run (settledByContention)
  json replay;      // early stopping: where each reference run would stop (replayStops)
  bool replay_after_target = false;  // ... and every one reached the target first
};

// The evaluation's parts from the evaluation trials: its speed, and without reference runs the
// baseline's evaluation time and training rate (the trials' own) to weigh it.
void evaluationParts(const Inputs& in, stats::TimeToTargetParts& p, bool withReferences) {
  if (!in.evaluation) return;
  p.eval_speed = stats::logEstimateOf(in.evaluation->estimate);
  if (withReferences) return;
  p.baseline_eval_s = stats::logEstimateOfRuns(in.evaluation->baseline_eval_s.value_or(std::vector<double>{}));
  if (in.segments.unchanged())  // evaluation segments: their warm-up's; trials: their own
    p.baseline_train_samples_per_s =
        stats::exactly(geometricMean(in.evaluation->baseline_train_rates.value_or(in.evaluation->baseline_rates)));
}

// The bound of a larger global batch (samplesNeverFewer): the reference runs' samples as the least
// the variant needs; its start-up the quickest its trials took (none: free); its evaluation at
// most as much faster as it has more ranks to share it (each evaluates its shard). What it
// composes is the most the variant's time to target can be faster.
stats::TimeToTargetParts assumedBound(stats::TimeToTargetParts p, const TryOptions& o, const Inputs& in) {
  p.keepMath(stats::summariseRuns(targetRuns(in.refs->runs, *in.target), in.refs->resolution).samples);
  p.samples_bound = stats::SamplesBound::AtLeast;
  const auto& startups = in.segments.variant_startup_s;
  p.ownStartup(stats::exactly(startups && !startups->empty() ? *std::min_element(startups->begin(), startups->end()) : 0.0));
  p.eval_speed = stats::exactly(std::max(1.0, double(o.variant.speedups.devices) / double(std::max(1, o.baseline.speedups.devices))));
  return p;
}

// The parts of the time to target from what was measured (see the header).
stats::TimeToTargetParts partsOf(const TryOptions& o, const Inputs& in) {
  stats::TimeToTargetParts p;
  const stats::SpeedupEstimate& seg = in.segments.estimate;
  const bool unchanged = in.segments.unchanged();
  p.throughput = unchanged ? stats::exactly(1) : stats::logEstimateOf(seg);
  if (!unchanged && std::isfinite(seg.level)) p.throughput_alpha = 1 - seg.level;  // judged at its look's α
  const int64_t perEpoch = in.train_samples > 0 ? in.train_samples : 1;
  p.samples_per_evaluation = o.baseline.train.eval_every_steps > 0
                                 ? double(o.baseline.train.eval_every_steps * samplesPerStep(o.baseline))
                                 : double(perEpoch);
  if (!in.refs || in.refs->runs.empty()) {  // the training (and a changed evaluation) over the configured length
    p.baseline_train_samples_per_s = stats::exactly(geometricMean(in.segments.baseline_rates));
    evaluationParts(in, p, false);
    p.keepMath(stats::exactly(double(perEpoch) * std::max(1, o.baseline.train.epochs)));
    return p;
  }
  const auto& refs = in.refs->runs;
  p.baseline_startup_s = in.baseline.startup;
  p.shareStartup();
  p.baseline_train_samples_per_s = in.baseline.rate;
  p.baseline_eval_s = in.baseline.eval;
  evaluationParts(in, p, true);
  if ((in.keeps && in.replay.is_null()) || in.replay_after_target) {
    p.keepMath(stats::summariseRuns(targetRuns(refs, *in.target), in.refs->resolution).samples);
    return p;
  }
  if (in.samples_assumed) return assumedBound(p, o, in);
  p.setSamples(in.samples);
  if (!in.replay.is_null()) return p;  // the reference runs themselves, cut where the rule stops them
  // Start-up and evaluations the reference runs': a change of the optimiser's numbers alone (no
  // noise of its runs'), or no run of its own yet (futileSamples asks what one would compose).
  if (in.changes.onlyArithmetic() || in.variant.empty()) return p;
  const std::vector<records::RunRecord> timed(in.variant.begin(), in.variant.begin() + long(std::min(in.variant.size(), in.timed_variant_runs)));
  if (!timed.empty()) p.ownStartup(variantOrBorrowed(perRun(timed, startupOf), p.baseline_startup_s));
  if (!in.evaluation)
    p.eval_speed = ratioOf(p.baseline_eval_s, variantOrBorrowed(perRun(timed, evalOf), p.baseline_eval_s));
  return p;
}

}  // namespace

namespace {

// The reference runs' train.threads when they shared the cores (sharingTheCores set it), else 0:
// the variant's runs take the same, so that its first run, alone, starts and evaluates on as many
// threads as the reference runs it is weighed against (not on all the cores, 2 against 1 here).
int referenceThreads(const std::vector<records::RunRecord>& runs) {
  if (runs.empty()) return 0;
  const json train = runs.front().config.value("train", json::object());
  return train.is_object() ? train.value("threads", 0) : 0;
}

// The reference runs this try uses: run (to `composed.reference_runs`) when the math changes;
// when it keeps the math, only those the experiment already has (none: training time only).
Result<std::optional<ReferenceRuns>> referencesFor(const TryOptions& o, const ComposedOptions& c, const Inputs& in,
                                                   const Hooks& h) {
  ReferenceOptions r;
  r.baseline = o.baseline;
  r.dataset_id = in.math.dataset_id;
  r.train_samples = in.train_samples;
  r.store = c.references;
  r.runs = c.reference_runs;
  r.parallel = c.parallel > 0 ? c.parallel : referenceParallel(o.baseline, in.math.device == "cpu", c.reference_runs);
  r.cli_path = h.cli_path;
  r.stop = h.stop;
  r.log = h.log;
  r.on_progress = [&h](int done, int total) { detail::phase(h, kReferencePhase, done, total); };
  std::error_code ec;
  const bool stored = fs::exists(r.store / referenceKey(o.baseline, r.dataset_id) / proto::kReferenceFile, ec);
  const bool needed = !in.keeps || in.changes.has(Part::Replay);
  if (c.reference_runs <= 0 || (!needed && !stored)) return std::optional<ReferenceRuns>();
  auto refs = ensureReferenceRuns(r);
  if (!refs.ok()) return refs.error();
  return std::optional<ReferenceRuns>(std::move(*refs));
}

// The target: the user's, else the reference runs' fair target (their lowest best less its spread):
// the one rule of both methods (tryTarget).
TryTarget targetOf(const TryOptions& o, const std::optional<ReferenceRuns>& refs) {
  return tryTarget(o.policy.target_acc, refs ? refs->runs : std::vector<records::RunRecord>{}, nullptr);
}

// Early stopping replayed on the reference runs (report::replayEarlyStopping): each run as the
// variant would have trained it, to the target as the reference did when the rule stops it after
// the target, else never reaching it (a bound: at least the reference's samples).
void replayStops(const TryOptions& o, Inputs& in, const stats::SamplesRule& rule) {
  const auto reference = targetRuns(in.refs->runs, *in.target);
  std::vector<stats::TargetRun> replayed;
  json runs = json::array();
  in.replay_after_target = true;
  for (size_t i = 0; i < reference.size(); ++i) {
    const records::RunRecord& run = in.refs->runs[i];
    const report::ReplayedStop stop = report::replayEarlyStopping(run, o.variant.speedups.early_stopping);
    stats::TargetRun r = reference[i];
    const bool first = !stop.stops || (r.reached && !(r.samples > stop.samples));
    // Cut before the target, the run never reaches it: it needs at least what the reference needed
    // (a bound from the reference's own count, never below it: early stopping cannot be faster).
    if (!first) r = stats::TargetRun{std::max(stop.samples, r.samples), false, r.seed};
    in.replay_after_target = in.replay_after_target && first;
    replayed.push_back(r);
    const double last = run.evals.empty() ? NAN : double(run.evals.back().samples);
    runs.push_back({{"seed", r.seed}, {"stops", stop.stops}, {"stop_epoch", stop.epoch},
                    {"stop_samples", std::isfinite(stop.samples) ? json(stop.samples) : json()},
                    {"fraction_of_run", stop.stops && last > 0 ? json(stop.samples / last) : json(1.0)},
                    {"target_first", first}, {"reason", stop.reason}});
  }
  in.replay = {{"rule", proto::configToJson(o.variant)["speedups"]["early_stopping"]}, {"runs", runs}};
  in.samples = stats::compareSamples(reference, replayed, rule);
}

// For a question that is only "faster?" (futility), the samples past which the look at run k
// (a wave's first) stops the runs without calling the variant faster, whatever the run needed: at
// those samples a run reaching the target would stop them so (settlesNotFaster; the seeds' scatter
// counted: stats::VariantLooks), and a run cut there bounds the time to target to under the
// threshold even were its start-up and evaluations kFutileQuicker times quicker than those composed
// (the variant's runs before it, else the reference runs', which may have run side by side). After
// a run cut so, the looks see a bound and stop on it ("slower bound" too). `cap` when no point
// under it is such.
constexpr double kFutileQuicker = 1.25;
// A look that stops the runs without calling the variant faster ("cannot be faster", a bound below
// the threshold, clearly slower, negligible); "all runs" is not a stop that settles.
bool settlesNotFaster(stats::LookStop stop, const stats::TimeToTargetEstimate& e) {
  return stop != stats::LookStop::Continue && stop != stats::LookStop::AllRuns && e.speedup.verdict != stats::Verdict::Faster;
}
double futileSamples(const TryOptions& o, const ComposedOptions& c, Inputs in, const std::vector<stats::TargetRun>& reference,
                     const stats::SamplesRule& rule, double cap, int k) {
  const stats::VariantLooks looks{c.variant_runs, o.policy.min_effect, true};
  const std::vector<stats::TargetRun> before = targetRuns(in.variant, *in.target);
  in.rule = looks.ruleAt(k);
  const auto parts = [&](double samples, bool reached) {
    std::vector<stats::TargetRun> runs = before;
    runs.push_back({samples, reached, 0});
    in.samples = stats::compareSamples(reference, runs, rule);
    return partsOf(o, in);
  };
  const auto cannotBeFaster = [&](double samples) {
    stats::TimeToTargetParts cut = parts(samples, false);
    stats::LogEstimate quicker = cut.variant_startup_s;
    quicker.value /= kFutileQuicker;
    cut.ownStartup(quicker);
    cut.eval_speed.value *= kFutileQuicker;
    const double point = stats::composeTimeToTarget(cut, in.rule).speedup.point;
    if (!(std::isfinite(point) && point < 1 + std::max(o.policy.min_effect, 0.0))) return false;
    const stats::TimeToTargetEstimate reached = stats::composeTimeToTarget(parts(samples, true), in.rule);
    return settlesNotFaster(looks.stopAfter(k, reached), reached);
  };
  double lo = 0, hi = cap;  // a run cut at lo may still be faster; one cut at hi cannot
  if (!(hi > 0) || !cannotBeFaster(hi)) return cap;
  for (int i = 0; i < 40 && hi - lo > 1e-3 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (cannotBeFaster(mid) ? hi : lo) = mid;
  }
  return hi;
}

// The cap of the wave from run k: futileSamples when it comes first (said), else the plan's.
double waveCap(const TryOptions& o, const ComposedOptions& c, const VariantPlan& p, const std::vector<stats::TargetRun>& reference,
               const stats::SamplesRule& rule, const Inputs& in, int k, const Hooks& h) {
  if (!p.futile_cap) return p.cap_samples;
  const double futile = futileSamples(o, c, in, reference, rule, p.cap_samples, k);
  if (!(futile < p.cap_samples)) return p.cap_samples;
  if (h.log)
    std::fprintf(h.log, "%s at %.0f samples (%s the reference runs'), not %.0f: not at the target by then, it cannot be faster\n",
                 k == 1 ? "the variant's first run stops" : ("the variant's runs from run " + std::to_string(k) + " on stop").c_str(), futile,
                 wb::fmtSpeedup(futile * c.cap / p.cap_samples).c_str(), p.cap_samples);
  return futile;
}

// The variant's runs, each look composing the time to target at its share of the false-alarm rate
// (stats::VariantLooks), until a look settles it or all `variant_runs` ran. The first runs alone;
// then `at_once` side by side, looked at in seed order as if they had run one after another: a run
// past the look that settles it is kept in its folder (try.json's looks: "beyond") but not counted,
// so the answer is the one they would give in turn. Side by side they slow each other: the
// variant's start-up and evaluation time are then its first run's (timed_variant_runs).
Status lookedAtVariantRuns(const TryOptions& o, const ComposedOptions& c, const VariantPlan& p,
                           const std::vector<stats::TargetRun>& reference, Inputs& in, const Hooks& h) {
  stats::SamplesRule rule;
  rule.min_effect = o.policy.min_effect;
  rule.resolution = in.refs->resolution;
  const stats::VariantLooks looks{c.variant_runs, o.policy.min_effect, c.futility};
  if (p.at_once > 1) in.timed_variant_runs = 1;
  stats::LookStop stop = stats::LookStop::Continue;
  json beyond = json::array();
  double cap = p.cap_samples;
  for (int k = 1; k <= c.variant_runs && stop == stats::LookStop::Continue;) {
    const int n = k == 1 ? 1 : std::min(p.at_once, c.variant_runs - k + 1);
    if (h.log && k > 1 && (n > 1 || p.elsewhere))
      std::fprintf(h.log, "the variant's runs %d-%d %s (their samples to target only)\n", k, k + n - 1,
                   p.elsewhere ? "as one job array" : "side by side");
    detail::phase(h, kVariantPhase, k - 1, c.variant_runs);
    VariantPlan capped = p;
    capped.cap_samples = waveCap(o, c, p, reference, rule, in, k, h);
    cap = capped.cap_samples;
    auto wave = variantWave(o, capped, h, k - 1, n);
    if (!wave.ok()) return wave.error();
    for (auto& run : *wave) {
      if (stop != stats::LookStop::Continue) {
        beyond.push_back(run.dir);
        continue;
      }
      in.variant.push_back(std::move(run));
      in.samples = stats::compareSamples(reference, targetRuns(in.variant, *in.target), rule);
      in.rule = looks.ruleAt(k);
      stop = looks.stopAfter(k++, stats::composeTimeToTarget(partsOf(o, in), in.rule));
    }
  }
  in.looks = {{"max_runs", c.variant_runs}, {"runs", int(in.variant.size())}, {"stopped", stats::lookStopName(stop)},
              {"alpha", in.rule.alpha}, {"at_once", p.at_once}, {"beyond", beyond},
              {"cap_samples", cap}, {"cap", cap < p.cap_samples ? "cannot be faster past it" : "cap x the reference runs'"}};
  if (h.log && int(in.variant.size()) < c.variant_runs)
    std::fprintf(h.log, "the variant's runs stop after %zu of %d: %s\n", in.variant.size(), c.variant_runs,
                 stats::lookStopName(stop).c_str());
  return {};
}

// For a question that is only "faster?" (futility): a larger global batch whose throughput is too
// slow for it to be faster even needing no more samples than the baseline (assumedBound) is
// answered by that bound, without a run to the target.
bool settledByTheBound(const TryOptions& o, const ComposedOptions& c, Inputs& in, const Hooks& h) {
  if (!c.futility || !samplesNeverFewer(o) || in.segments.contended) return false;
  in.samples_assumed = true;
  const stats::TimeToTargetEstimate e = stats::composeTimeToTarget(partsOf(o, in), in.rule);
  in.samples_assumed = std::isfinite(e.speedup.hi) && e.speedup.hi < 1 + o.policy.min_effect;
  if (!in.samples_assumed) return false;
  in.looks = {{"max_runs", c.variant_runs}, {"runs", 0}, {"stopped", stats::lookStopName(stats::LookStop::CannotBeFaster)},
              {"assumed", "samples to target no fewer than the baseline's"}};
  if (h.log)
    std::fprintf(h.log, "no run to the target: a larger global batch that needed no more samples would still be at most %s as fast\n",
                 wb::fmtSpeedup(e.speedup.hi).c_str());
  return true;
}

// Whether another process used the CPU while the throughput (or the evaluation's time) was
// measured: the try then gives no verdict, whatever the samples to the target (composedRecord).
bool throughputContended(const Inputs& in) { return in.segments.contended || (in.evaluation && in.evaluation->contended); }

// For a question that is only "faster?" (futility), a throughput measured under contention leaves
// no verdict for the variant's runs to the target to help: none is started (try.json's samples
// and looks say why). A try asked "by how much?" still runs them: their samples are the host's
// load's no more than the reference runs' are.
bool settledByContention(const ComposedOptions& c, Inputs& in, const Hooks& h) {
  if (!c.futility || !throughputContended(in)) return false;
  in.samples_not_run = true;
  in.looks = {{"max_runs", c.variant_runs}, {"runs", 0}, {"stopped", kStoppedContended}};
  if (h.log)
    std::fprintf(h.log, "no run to the target: another process used the CPU while the throughput was measured, so there is "
                        "no verdict for them to give\n");
  return true;
}

Status measureSamples(const TryOptions& o, const ComposedOptions& c, Inputs& in, const Hooks& h) {
  if (in.changes.has(Part::Replay) && in.refs && in.target) {
    stats::SamplesRule rule;
    rule.min_effect = o.policy.min_effect;
    rule.resolution = in.refs->resolution;
    replayStops(o, in, rule);
    return {};
  }
  if (in.keeps || !in.refs) return {};
  if (!in.target) return makeError(Errc::InvalidConfig, "the reference runs evaluated nothing: no target accuracy to train to");
  const auto reference = targetRuns(in.refs->runs, *in.target);
  std::vector<double> reached;
  for (const auto& r : reference) if (std::isfinite(r.samples)) reached.push_back(r.samples);
  VariantPlan p;
  p.target = *in.target;
  p.resolution = in.refs->resolution;
  p.cap_samples = c.cap * geometricMean(reached);
  p.train_samples = in.train_samples;
  p.threads = referenceThreads(in.refs->runs);
  p.at_once = c.variant_parallel > 0 ? c.variant_parallel : referenceParallel(o.variant, in.math.device == "cpu", c.variant_runs);
  if (c.variant_runs_on && c.variant_parallel != 1) {  // a cluster's array: the rest at once (or N), as many as it gives
    p.elsewhere = c.variant_runs_on(o.out / proto::kClusterArrayFolder);
    p.at_once = c.variant_parallel > 1 ? c.variant_parallel : std::max(1, c.variant_runs - 1);
  }
  if (settledByContention(c, in, h) || settledByTheBound(o, c, in, h)) return {};
  p.futile_cap = c.futility && capEndsTheRun(o.variant, in.train_samples);
  return lookedAtVariantRuns(o, c, p, reference, in, h);
}

json dirsOf(const std::vector<records::RunRecord>& runs) {
  json dirs = json::array();
  for (const auto& r : runs) dirs.push_back(r.dir);
  return dirs;
}

// The reference runs, with their seed spread at the target and the runs a 5 % change in samples to
// target would need (80 % power, the variant as many runs): what a user needs to size the next try;
// which of them weigh the start-up, evaluation and rate, and how many another process slowed.
json referencesJson(const std::optional<ReferenceRuns>& refs, const BaselineTiming& timing, std::optional<double> target) {
  if (!refs) return json();
  const double spread = target ? stats::seedSpread(targetRuns(refs->runs, *target)) : NAN;
  const int needed = std::isfinite(spread) ? stats::runsToDetect(spread, 0.05, 0.8) : 0;
  return {{"dir", refs->dir.string()}, {"key", refs->key}, {"runs", dirsOf(refs->runs)}, {"reused", refs->reused},
          {"ran", refs->ran}, {"timed", timing.timed}, {"slowed", timing.slowed}, {"resolution", refs->resolution}, {"eval_every_steps", refs->eval_every_steps},
          {"seed_spread", std::isfinite(spread) ? json(spread) : json()}, {"runs_for_5pct", needed > 0 ? json(needed) : json()}};
}

proto::TryRecord composedRecord(const TryOptions& o, const Inputs& in, const stats::TimeToTargetEstimate& e, const std::string& status) {
  proto::TryRecord r = tryRecordOf(o, Outcome{}, status);
  const json throughput = records::speedRecordJson(in.segments);
  r.method = "composed";
  r.math = records::mathCheckJson(in.math);
  r.throughput = throughput;
  r.evaluation = in.evaluation ? records::speedRecordJson(*in.evaluation) : json();
  r.early_stopping = in.replay;
  r.samples = in.keeps || !in.refs     ? json()
              : in.samples_not_run      ? json{{"not_run", "the throughput was measured under contention: no verdict to gain"}}
              : in.samples_assumed      ? json{{"assumed", "at least the baseline's (a larger global batch)"}}
                                        : stats::samplesComparisonJson(in.samples);
  r.references = referencesJson(in.refs, in.baseline, in.target);
  for (const auto& run : in.variant) r.variant_runs.push_back(run.dir);
  r.variant_looks = in.looks;
  r.composed = stats::timeToTargetJson(e);
  r.words = stats::timeToTargetWords(e) + detail::replayWords(in.replay) + detail::looksWords(in.looks);
  r.training_only = !in.refs.has_value();
  r.target_acc = in.target.value_or(NAN);
  if (in.target_rule.target) r.target = in.target_rule.describe(), r.target_source = in.target_rule.source;
  r.reached = std::isfinite(e.speedup.point);
  r.estimate = {{"to_target", stats::estimateJson(e.speedup)}, {"throughput", throughput["estimate"]}};
  r.estimate["to_target"]["text"] = stats::formatEstimate(e.speedup);  // a bound reads "at most …", not "1 run each"
  if (throughputContended(in)) {  // no verdict from a contended host
    r.estimate["to_target"]["verdict"] = "contended";
    r.estimate["to_target"]["text"] = "contended: no verdict";
    r.words = "no verdict (another process used the CPU while the throughput was measured): " + r.words;
  }
  r.medians["time_to_target_s"] = {e.baseline_s, e.variant_s};
  r.medians["train_samples_per_s"] = {median(in.segments.baseline_rates), median(in.segments.variant_rates)};
  if (in.evaluation)
    r.medians["eval_s"] = {median(in.evaluation->baseline_eval_s.value_or(std::vector<double>{})),
                           median(in.evaluation->variant_eval_s.value_or(std::vector<double>{}))};
  r.answer = tryAnswer(r);
  return r;
}

Result<Inputs> measureAll(const TryOptions& o, const ComposedOptions& c, const Hooks& h) {
  Inputs in;
  in.rule.min_effect = o.policy.min_effect;
  in.changes = changesOf(o);
  auto speed = detail::measureSpeed(o, c.futility, h);
  if (!speed.ok()) return speed.error();
  in.math = std::move(*speed->math);
  in.segments = std::move(speed->throughput);
  in.evaluation = std::move(speed->evaluation);
  in.keeps = in.math.keeps_math;
  in.train_samples = in.math.train_samples;
  auto refs = referencesFor(o, c, in, h);
  if (!refs.ok()) return refs.error();
  in.refs = std::move(*refs);
  if (in.refs) in.baseline = baselineTiming(in.refs->runs, h);
  if (!in.keeps && !in.refs)
    return makeError(Errc::InvalidConfig, "the variant changes the training's math (" + in.math.verdict +
                                              ") and --reference-runs is 0: its samples to target need runs; give --reference-runs 5");
  if (in.changes.has(Part::Replay) && !in.refs)
    return makeError(Errc::InvalidConfig, "early stopping is replayed on the experiment's reference runs and --reference-runs is 0: "
                                          "give --reference-runs 5");
  in.target_rule = targetOf(o, in.refs);
  in.target = in.target_rule.acc();
  if (auto st = measureSamples(o, c, in, h); !st.ok()) return st.error();
  return in;
}

// What a try cut short keeps for the same command to reuse, in words: its parts' results in its
// folder, its variant runs that finished, the experiment's reference runs that finished.
std::vector<std::string> keptForRerun(const TryOptions& o, std::pair<int, int> references) {
  std::vector<std::string> kept;
  const auto has = [&](const char* file) { return records::readStored(o.out / file).read(); };
  if (has("math.json")) kept.push_back("the math check");
  if (has("segments.json") || has("trials.json")) kept.push_back("the training throughput");
  if (has("evaluation-segments.json") || has("evaluation-trials.json")) kept.push_back("the evaluation time");
  if (references.first > 0)
    kept.push_back(std::to_string(references.first) + " of " + std::to_string(references.second) + " reference runs");
  int variants = 0;
  for (int i = 0; variantSlot(o, i).kept; ++i) ++variants;
  if (variants > 0) kept.push_back(std::to_string(variants) + " of the variant's runs to the target");
  return kept;
}

}  // namespace

Result<TryResult> runComposedTry(const TryOptions& o, const ComposedOptions& c, const Hooks& hooks) {
  if (auto st = keepUnreadableResult(o.out / proto::kTryFile, hooks); !st.ok()) return st.error();
  if (auto st = keepTryInputs(o); !st.ok()) return st.error();
  if (auto st = detail::writeConfigs(o); !st.ok()) return st.error();
  Hooks h = hooks;  // the reference runs finished so far: what a cut try keeps of them
  std::pair<int, int> references{0, 0};
  h.on_event = [&references, &hooks](const json& ev) {
    if (proto::isEvent<proto::PhaseEvent>(ev))
      if (const auto p = proto::readPhaseEvent(ev); p.phase == kReferencePhase) references = {p.done, p.total};
    hooks.emit(ev);
  };
  auto in = measureAll(o, c, h);
  if (!in.ok()) {
    // Stopped, whatever the part under way made of its cut process (a run that ended "cancelled"):
    // a cancel, never a failure.
    const bool cut = in.error().code == Errc::Cancelled || h.stopRequested();
    proto::TryRecord stopped = tryRecordOf(o, Outcome{}, cut ? proto::kStatusCancelled : proto::kStatusFailed);
    stopped.method = "composed";
    stopped.error = in.error().message;
    if (cut) stopped.kept = keptForRerun(o, references);
    stopped.answer = tryAnswer(stopped);
    (void)writeFileAtomic(o.out / proto::kTryFile, proto::tryRecordJson(stopped).dump(2) + "\n");
    if (cut && in.error().code != Errc::Cancelled) return makeError(Errc::Cancelled, in.error().message);
    return in.error();
  }
  const stats::TimeToTargetEstimate e = stats::composeTimeToTarget(partsOf(o, *in), in->rule);
  TryResult r;
  r.doc = proto::tryRecordJson(composedRecord(o, *in, e, proto::kStatusOk));
  r.estimates.to_target = e.speedup;
  r.estimates.throughput = in->segments.estimate;
  r.estimates.reached = std::isfinite(e.speedup.point);
  if (auto st = writeFileAtomic(o.out / proto::kTryFile, r.doc.dump(2) + "\n"); !st.ok()) return st.error();
  return r;
}

}  // namespace wb::experiment
