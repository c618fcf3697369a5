// `try` by parts: the math check, segments, reference runs and the variant's runs to the target,
// composed into the time to target (composed_try.h).
#include "wb/experiment/composed_try.h"

#include <algorithm>
#include <cmath>

#include "wb/common/fs.h"
#include "throughput_trials.h"
#include "wb/launch/tool_run.h"
#include "wb/proto/config_json.h"
#include "wb/proto/run_status.h"
#include "wb/report/compare.h"
#include "wb/report/estimate_json.h"
#include "wb/report/host.h"
#include "wb/report/time_to_target_json.h"

namespace wb::experiment {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The config fields the segments switch in one process for a try by parts: wb/probe/segments.h's
// levers where the segments agree with whole runs (bench_parts.sh). train.batch_size is not among
// them: lenet at batch 256 against 64 measured 1.10-1.15x in most segment runs where whole runs
// measure 1.22x, and now and then (no other load seen) the batch-256 arm's steps took 4x as long
// (0.43x), so a batch change is measured with whole runs until they agree.
const std::vector<std::string>& segmentFields() {
  static const std::vector<std::string> fields{"speedups.precision", "speedups.workers", "speedups.pin_memory"};
  return fields;
}

// Fields that change the training's arithmetic but not how long a step takes (the optimiser's
// numbers, the schedule): the segments measure the variant's throughput without them, the runs to
// the target with them.
const std::vector<std::string>& mathOnlyFields() {
  static const std::vector<std::string> fields{"optim.lr", "optim.momentum", "optim.nesterov", "optim.weight_decay",
                                               "optim.schedule", "optim.warmup_fraction", "optim.step_size",
                                               "optim.gamma", "optim.lr_scaling", "optim.lr_scaling_warmup",
                                               "optim.lr_base_batch"};
  return fields;
}

// Fields a process cannot switch while it runs but short whole-process trials measure
// (throughput_trials.h): more devices, sharding, the levers past the recipe, the batch.
const std::vector<std::string>& trialFields() {
  static const std::vector<std::string> fields{"speedups.devices", "speedups.sharding", "speedups.channels_last",
                                               "speedups.fused_optimizer", "speedups.grad_accumulation",
                                               "speedups.decoded_cache", "speedups.cudnn_benchmark", "speedups.tf32",
                                               "train.batch_size"};
  return fields;
}

bool listed(const std::vector<std::string>& fields, const std::string& path) {
  return std::find(fields.begin(), fields.end(), path) != fields.end();
}

// The baseline with the variant's speed fields only (segments' and trials'): what the throughput
// measurement runs as the variant.
json throughputVariant(const Config& baseline, const Config& variant) {
  json out = proto::configToJson(baseline);
  const json v = proto::configToJson(variant);
  std::vector<std::string> speed = segmentFields();
  speed.insert(speed.end(), trialFields().begin(), trialFields().end());
  for (const auto& path : speed) {
    const auto dot = path.find('.');
    const std::string section = path.substr(0, dot), key = path.substr(dot + 1);
    out[section][key] = v[section][key];
  }
  return out;
}

fs::path baselineFile(const TryOptions& o) { return o.out / "parts" / "baseline.json"; }
fs::path variantFile(const TryOptions& o) { return o.out / "parts" / "variant.json"; }
fs::path throughputFile(const TryOptions& o) { return o.out / "parts" / "variant-throughput.json"; }

// Writes the two configs the measurements read; a folder holding another try's is refused.
Status writeConfigs(const TryOptions& o) {
  std::error_code ec;
  fs::create_directories(o.out / "logs", ec);
  fs::create_directories(o.out / "parts", ec);
  const std::pair<fs::path, json> files[] = {{baselineFile(o), proto::configToJson(o.baseline)},
                                              {variantFile(o), proto::configToJson(o.variant)},
                                              {throughputFile(o), throughputVariant(o.baseline, o.variant)}};
  for (const auto& [file, doc] : files) {
    if (auto stored = report::readStored(file); stored && *stored != doc)
      return makeError(Errc::InvalidConfig, file.string() + " holds another try's config: give a new --out");
    if (auto st = writeFileAtomic(file, doc.dump(2) + "\n"); !st.ok()) return st;
  }
  return {};
}

// One measuring command's result: kept in the try's folder, reused when the try continues.
Result<json> measure(const TryOptions& o, const Hooks& h, const std::string& tool, const std::string& what,
                     const fs::path& variant, std::vector<std::string> extra = {}) {
  const fs::path file = o.out / (tool + ".json");
  if (auto kept = report::readStored(file); kept && kept->is_object()) {
    if (h.log) std::fprintf(h.log, "%s: kept from %s\n", what.c_str(), file.c_str());
    return *kept;
  }
  if (h.log) std::fprintf(h.log, "%s…\n", what.c_str());
  launch::ToolRun r;
  r.program = h.cli_path;
  r.args = {"probe", tool, "--config", baselineFile(o).string(), "--variant-config", variant.string(), "--json"};
  r.args.insert(r.args.end(), extra.begin(), extra.end());
  r.result_file = file;
  r.log_file = o.out / "logs" / (tool + ".log");
  r.what = what;
  r.stop = h.stop;
  return launch::runTool(r);
}

// A variant run to the target: from `seed`, evaluating as often (in samples) as the references,
// stopping at the target or at the cap; a constant learning rate lets the epochs grow to the cap
// (a schedule would change with them, so its epochs stay and the cap is the configured length).
Config variantRunConfig(const TryOptions& o, uint64_t seed, double target, double resolution, double capSamples,
                        int64_t trainSamples) {
  Config c = o.variant;
  const int64_t global = samplesPerStep(c);
  c.seed = seed;
  c.name = o.variant.name + "-to-target-" + std::to_string(seed);
  c.train.stop_at_accuracy = target;
  c.train.eval_every_steps = std::max<int64_t>(1, std::llround(resolution / double(global)));
  if (c.optim.schedule == "constant" && trainSamples > 0) {
    c.train.epochs = std::max(c.train.epochs, int(std::ceil(capSamples / double(trainSamples))));
    c.train.max_steps = std::max<int64_t>(1, int64_t(std::ceil(capSamples / double(global))));
  }
  return c;
}

struct VariantPlan {
  double target = 0, resolution = 0, cap_samples = 0;
  int64_t train_samples = 0;
  int runs = 0;
};

// The variant's runs to the target, seeds as the references'; a finished one is kept.
Result<std::vector<report::RunRecord>> variantRuns(const TryOptions& o, const VariantPlan& p, const Hooks& h) {
  std::vector<report::RunRecord> runs;
  for (int i = 0; i < p.runs; ++i) {
    if (h.stop && h.stop->load()) return makeError(Errc::Cancelled, "the variant's runs to the target were stopped");
    const uint64_t seed = kFirstReferenceSeed + uint64_t(i);
    const std::string stem = "runs/variant-seed-" + std::to_string(seed);
    fs::path dir = o.out / stem;
    std::error_code ec;
    std::optional<report::RunRecord> kept;  // a folder cut short is left as it is: the run goes to the next name
    for (int k = 2; fs::exists(dir, ec) && !(kept = finishedTargetRun(dir)); ++k) dir = o.out / (stem + "-r" + std::to_string(k));
    if (kept) {
      runs.push_back(std::move(*kept));
      continue;
    }
    if (h.log) std::fprintf(h.log, "variant run to the target, seed %llu -> %s\n", (unsigned long long)seed, dir.c_str());
    const Config c = variantRunConfig(o, seed, p.target, p.resolution, p.cap_samples, p.train_samples);
    auto out = launchOne(c, dir, UserCommand{}, h.cli_path, "the variant, seed " + std::to_string(seed));
    if (!out.ok()) return out.error();
    auto run = finishedTargetRun(dir);
    if (!run) return makeError(Errc::Internal, "the variant's run " + dir.string() + " ended " + out->status + ": see its logs");
    runs.push_back(std::move(*run));
  }
  return runs;
}

}  // namespace

std::string composedUnavailable(const TryOptions& o) {
  if (o.user_command.set()) return "the runs are your own command (--command): only whole runs measure it";
  if (o.variant_command) return "the variant is another command (--variant-command): only whole runs measure it";
  for (const auto& change : report::configDiff(proto::configToJson(o.baseline), proto::configToJson(o.variant))) {
    if (change.path == "name" || change.path == "seed") continue;
    if (!listed(segmentFields(), change.path) && !listed(trialFields(), change.path) && !listed(mathOnlyFields(), change.path))
      return change.path + " is not measured by parts: only a change of the steps is (precision, workers, pin memory, "
                           "devices, sharding, the batch, the levers past the recipe, the optimiser's numbers)";
  }
  return "";
}

namespace {

// Whether the segments can switch the change in one process (else short trials measure it).
bool switchesInProcess(const TryOptions& o) {
  for (const auto& change : report::configDiff(proto::configToJson(o.baseline), proto::configToJson(o.variant)))
    if (listed(trialFields(), change.path)) return false;
  return true;
}

// Throughput from short whole-process trials, kept in trials.json (and the runner's folder trials/).
Result<json> measureByTrials(const TryOptions& o, const Hooks& h) {
  const fs::path file = o.out / "trials.json";
  if (auto kept = report::readStored(file); kept && kept->is_object()) return *kept;
  if (h.log) std::fprintf(h.log, "training throughput (short interleaved trials of %lld steps, whole processes)…\n",
                          static_cast<long long>(detail::kTrialSteps));
  detail::TrialsOptions t;
  t.baseline = o.baseline;
  auto variant = proto::configFromJson(throughputVariant(o.baseline, o.variant));
  if (!variant.ok()) return variant.error();
  t.variant = *variant;
  t.out = o.out / "trials";
  t.min_effect = o.policy.min_effect;
  Hooks quiet = h;
  quiet.on_pair = nullptr;
  auto doc = detail::measureTrials(t, quiet);
  if (!doc.ok()) return doc.error();
  if (auto st = writeFileAtomic(file, doc->dump(2) + "\n"); !st.ok()) return st.error();
  return doc;
}

}  // namespace

namespace {

double median(std::vector<double> xs) { return xs.empty() ? NAN : report::median(xs); }

// One value per run (NaN-free) for the log estimates.
template <typename F>
std::vector<double> perRun(const std::vector<report::RunRecord>& runs, F pick) {
  std::vector<double> xs;
  for (const auto& r : runs)
    if (auto v = pick(report::computeMetrics(r, std::nullopt)); v && std::isfinite(*v) && *v > 0) xs.push_back(*v);
  return xs;
}

std::optional<double> startupOf(const report::RunMetrics& m) { return m.time_to_first_step_s; }
std::optional<double> rateOf(const report::RunMetrics& m) { return m.train_samples_per_s; }
std::optional<double> evalOf(const report::RunMetrics& m) {
  return m.eval_ms ? std::optional<double>(*m.eval_ms / 1000.0) : std::nullopt;
}

// a / b of two arms' log estimates: the logs' standard errors added, the smaller df.
report::LogEstimate ratioOf(const report::LogEstimate& a, const report::LogEstimate& b) {
  report::LogEstimate r;
  r.value = a.value / b.value;
  r.log_se = std::hypot(a.log_se, b.log_se);
  r.df = std::min(a.df, b.df);
  return r;
}

double geometricMean(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += std::log(x);
  return xs.empty() ? NAN : std::exp(s / double(xs.size()));
}

struct Inputs {
  json math, segments;
  bool keeps = true;
  int64_t train_samples = 0;
  std::optional<ReferenceRuns> refs;
  std::optional<double> target;
  std::vector<report::RunRecord> variant;
  report::SamplesComparison samples;
};

// The parts of the time to target from what was measured (see the header).
report::TimeToTargetParts partsOf(const TryOptions& o, const Inputs& in) {
  report::TimeToTargetParts p;
  const report::SpeedupEstimate seg = report::estimateFromJson(in.segments.value("estimate", json()));
  p.throughput = report::logEstimateOf(seg);
  const int64_t perEpoch = in.train_samples > 0 ? in.train_samples : 1;
  p.samples_per_evaluation = o.baseline.train.eval_every_steps > 0
                                 ? double(o.baseline.train.eval_every_steps * samplesPerStep(o.baseline))
                                 : double(perEpoch);
  if (!in.refs || in.refs->runs.empty()) {  // training time only, over the configured length
    p.baseline_train_samples_per_s = report::exactly(geometricMean(in.segments.value("baseline_rates", std::vector<double>{})));
    p.keepMath(report::exactly(double(perEpoch) * std::max(1, o.baseline.train.epochs)));
    return p;
  }
  const auto& refs = in.refs->runs;
  p.baseline_startup_s = report::logEstimateOfRuns(perRun(refs, startupOf));
  p.variant_startup_s = p.baseline_startup_s;
  p.baseline_train_samples_per_s = report::logEstimateOfRuns(perRun(refs, rateOf));
  p.baseline_eval_s = report::logEstimateOfRuns(perRun(refs, evalOf));
  if (in.keeps) {
    p.keepMath(report::summariseRuns(targetRuns(refs, *in.target), in.refs->resolution).samples);
    return p;
  }
  p.setSamples(in.samples);
  p.variant_startup_s = report::logEstimateOfRuns(perRun(in.variant, startupOf));
  p.eval_speed = ratioOf(p.baseline_eval_s, report::logEstimateOfRuns(perRun(in.variant, evalOf)));
  return p;
}

}  // namespace

namespace {

// The reference runs this try uses: run (to `composed.reference_runs`) when the math changes;
// when it keeps the math, only those the experiment already has (none: training time only).
Result<std::optional<ReferenceRuns>> referencesFor(const TryOptions& o, const ComposedOptions& c, const Inputs& in,
                                                   const Hooks& h) {
  ReferenceOptions r;
  r.baseline = o.baseline;
  r.dataset_id = in.math.value("dataset_id", std::string());
  r.train_samples = in.train_samples;
  r.store = c.references;
  r.runs = c.reference_runs;
  r.parallel = c.parallel;
  r.cli_path = h.cli_path;
  r.stop = h.stop;
  r.log = h.log;
  std::error_code ec;
  const bool stored = fs::exists(r.store / referenceKey(o.baseline, r.dataset_id) / "reference.json", ec);
  if (c.reference_runs <= 0 || (in.keeps && !stored)) return std::optional<ReferenceRuns>();
  auto refs = ensureReferenceRuns(r);
  if (!refs.ok()) return refs.error();
  return std::optional<ReferenceRuns>(std::move(*refs));
}

// The target: the user's, else the reference runs' fair target (their lowest best less its spread).
std::optional<double> targetOf(const TryOptions& o, const std::optional<ReferenceRuns>& refs) {
  if (o.policy.target_acc) return o.policy.target_acc;
  if (!refs) return std::nullopt;
  std::vector<const report::RunRecord*> records;
  for (const auto& r : refs->runs) records.push_back(&r);
  const auto fair = report::fairTargetOf(std::nullopt, records);
  return fair ? std::optional<double>(fair->acc) : std::nullopt;
}

Status measureSamples(const TryOptions& o, const ComposedOptions& c, Inputs& in, const Hooks& h) {
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
  p.runs = c.variant_runs;
  auto runs = variantRuns(o, p, h);
  if (!runs.ok()) return runs.error();
  in.variant = std::move(*runs);
  report::SamplesRule rule;
  rule.min_effect = o.policy.min_effect;
  rule.resolution = in.refs->resolution;
  in.samples = report::compareSamples(reference, targetRuns(in.variant, *in.target), rule);
  return {};
}

json dirsOf(const std::vector<report::RunRecord>& runs) {
  json dirs = json::array();
  for (const auto& r : runs) dirs.push_back(r.dir);
  return dirs;
}

// The reference runs, with their seed spread at the target and the runs a 5 % change in samples to
// target would need (80 % power, the variant as many runs): what a user needs to size the next try.
json referencesJson(const std::optional<ReferenceRuns>& refs, std::optional<double> target) {
  if (!refs) return json();
  const double spread = target ? report::seedSpread(targetRuns(refs->runs, *target)) : NAN;
  const int needed = std::isfinite(spread) ? report::runsToDetect(spread, 0.05, 0.8) : 0;
  return {{"dir", refs->dir.string()}, {"key", refs->key}, {"runs", dirsOf(refs->runs)}, {"reused", refs->reused},
          {"ran", refs->ran}, {"resolution", refs->resolution}, {"eval_every_steps", refs->eval_every_steps},
          {"seed_spread", std::isfinite(spread) ? json(spread) : json()}, {"runs_for_5pct", needed > 0 ? json(needed) : json()}};
}

json composedDoc(const TryOptions& o, const Inputs& in, const report::TimeToTargetEstimate& e, const std::string& status) {
  json doc = tryJson(o, Outcome{}, status);
  const json throughput = in.segments.value("estimate", json());
  const auto rates = [&](const char* side) { return median(in.segments.value(side, std::vector<double>{})); };
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(); };
  doc["method"] = "composed";
  doc["math"] = in.math;
  doc["throughput"] = in.segments;
  doc["samples"] = in.keeps || !in.refs ? json() : report::samplesComparisonJson(in.samples);
  doc["references"] = referencesJson(in.refs, in.target);
  doc["variant_runs"] = dirsOf(in.variant);
  doc["composed"] = report::timeToTargetJson(e);
  doc["words"] = report::timeToTargetWords(e);
  doc["training_only"] = !in.refs.has_value();
  doc["target_acc"] = in.target ? json(*in.target) : json();
  doc["reached"] = std::isfinite(e.speedup.point);
  doc["estimate"] = {{"to_target", report::estimateJson(e.speedup)}, {"throughput", throughput}};
  if (in.segments.value("contended", false)) {  // the segments' own rule: no verdict from a contended host
    doc["estimate"]["to_target"]["verdict"] = "contended";
    doc["words"] = "no verdict (another process used the CPU while the throughput was measured): " + doc["words"].get<std::string>();
  }
  doc["medians"] = {{"time_to_target_s", {{"baseline", num(e.baseline_s)}, {"variant", num(e.variant_s)}}},
                    {"train_samples_per_s", {{"baseline", num(rates("baseline_rates"))}, {"variant", num(rates("variant_rates"))}}}};
  return doc;
}

Result<Inputs> measureAll(const TryOptions& o, const ComposedOptions& c, const Hooks& h) {
  Inputs in;
  auto math = measure(o, h, "math", "the math check (the first steps' losses from one seed)", variantFile(o));
  if (!math.ok()) return math.error();
  in.math = std::move(*math);
  in.keeps = in.math.value("keeps_math", false);
  in.train_samples = in.math.value("train_samples", int64_t{0});
  auto segments = switchesInProcess(o)
                      ? measure(o, h, "segments", "training throughput (interleaved segments in one process)", throughputFile(o),
                                {"--min-effect", std::to_string(o.policy.min_effect)})
                      : measureByTrials(o, h);
  if (!segments.ok()) return segments.error();
  in.segments = std::move(*segments);
  auto refs = referencesFor(o, c, in, h);
  if (!refs.ok()) return refs.error();
  in.refs = std::move(*refs);
  if (!in.keeps && !in.refs)
    return makeError(Errc::InvalidConfig, "the variant changes the training's math (" + in.math.value("verdict", std::string()) +
                                              ") and --reference-runs is 0: its samples to target need runs; give --reference-runs 5");
  in.target = targetOf(o, in.refs);
  if (auto st = measureSamples(o, c, in, h); !st.ok()) return st.error();
  return in;
}

}  // namespace

Result<TryResult> runComposedTry(const TryOptions& o, const ComposedOptions& c, const Hooks& h) {
  if (auto st = writeConfigs(o); !st.ok()) return st.error();
  auto in = measureAll(o, c, h);
  if (!in.ok()) {
    const bool cut = in.error().code == Errc::Cancelled;
    (void)writeFileAtomic(o.out / "try.json", [&] {
      json doc = tryJson(o, Outcome{}, cut ? proto::kStatusCancelled : proto::kStatusFailed);
      doc["method"] = "composed", doc["error"] = in.error().message;
      return doc.dump(2) + "\n";
    }());
    return in.error();
  }
  report::VerdictRule rule;
  rule.min_effect = o.policy.min_effect;
  const report::TimeToTargetEstimate e = report::composeTimeToTarget(partsOf(o, *in), rule);
  TryResult r;
  r.doc = composedDoc(o, *in, e, proto::kStatusOk);
  r.estimates.to_target = e.speedup;
  r.estimates.throughput = report::estimateFromJson(in->segments.value("estimate", json()));
  r.estimates.reached = std::isfinite(e.speedup.point);
  if (auto st = writeFileAtomic(o.out / "try.json", r.doc.dump(2) + "\n"); !st.ok()) return st.error();
  return r;
}

}  // namespace wb::experiment

namespace wb::experiment {
namespace {

report::Cell numCell(const json& v, std::string (*fmt)(double)) {
  return v.is_number() ? report::Cell::num(fmt(v.get<double>()), v.get<double>()) : report::Cell::str("–");
}

report::Cell estimateCellOf(const json& est) {
  const report::SpeedupEstimate e = report::estimateFromJson(est);
  if (!std::isfinite(e.point)) return report::Cell::str("–");
  return report::Cell::num(report::formatEstimate(e), e.point);
}

std::string fmtSamples(double v) { return report::fmtFixed(v, 0); }

std::vector<report::Cell> samplesRow(const json& doc) {
  const json samples = doc.value("samples", json());
  if (!samples.is_object())
    return {report::Cell::str("Samples to target"), report::Cell::str("–"), report::Cell::str("–"),
            report::Cell::str(doc.value("training_only", false) ? "same (keeps the math)" : "same (keeps the math, checked)")};
  const report::SamplesComparison c = report::samplesComparisonFromJson(samples);
  return {report::Cell::str("Samples to target"), report::Cell::num(fmtSamples(c.reference.samples.value), c.reference.samples.value),
          report::Cell::num(fmtSamples(c.variant.samples.value), c.variant.samples.value),
          report::Cell::str(report::formatSamples(c))};
}

std::string referencesNote(const json& refs) {
  if (!refs.is_object())
    return "No reference runs of this experiment yet: the time is the training steps' over the configured length "
           "(start-up and evaluation not counted), so the speedup is the throughput's.";
  std::string spread;
  if (const json s = refs.value("seed_spread", json()); s.is_number())
    spread = "; their seeds scatter samples to target by " + report::fmtFixed(s.get<double>() * 100, 1) + " % (sd of ln)" +
             (refs.value("runs_for_5pct", json()).is_number()
                  ? ", so a 5 % change needs " + std::to_string(refs["runs_for_5pct"].get<int>()) + " runs an arm to be found 80 % of the time"
                  : std::string());
  return "Reference runs: " + std::to_string(refs.value("runs", json::array()).size()) + " of the baseline (" +
         std::to_string(refs.value("reused", 0)) + " reused, " + std::to_string(refs.value("ran", 0)) + " run now) in " +
         refs.value("dir", std::string()) + spread + ".";
}

}  // namespace

report::Table composedTryTable(const json& doc) {
  report::Table t;
  const json target = doc.value("target_acc", json());
  const std::string targetText = target.is_number() ? report::fmtAccuracy(target.get<double>()) : std::string("the target");
  t.title = "Try: " + doc.value("setting", std::string("the variant")) + " against the baseline, by parts";
  t.columns = {{"measure", "Measure", ""}, {"baseline", "Baseline", ""}, {"variant", "Variant", ""}, {"speedup", "Speedup", "x"}};
  const json medians = doc.value("medians", json::object()), est = doc.value("estimate", json::object());
  const auto side = [&](const char* metric, const char* s) { return medians.value(metric, json::object()).value(s, json()); };
  t.rows.push_back({report::Cell::str("Time to " + targetText + " (composed)"),
                    numCell(side("time_to_target_s", "baseline"), report::fmtSeconds),
                    numCell(side("time_to_target_s", "variant"), report::fmtSeconds), estimateCellOf(est.value("to_target", json()))});
  const bool trials = doc.value("throughput", json::object()).value("kind", std::string()) == "trials";
  t.rows.push_back({report::Cell::str(trials ? "Train samples/s (short trials)" : "Train samples/s (segments)"), numCell(side("train_samples_per_s", "baseline"), report::fmtRate),
                    numCell(side("train_samples_per_s", "variant"), report::fmtRate),
                    estimateCellOf(est.value("throughput", json()))});
  t.rows.push_back(samplesRow(doc));
  t.notes.push_back(doc.value("words", std::string("–")) + ".");
  if (const json math = doc.value("math", json()); math.is_object())
    t.notes.push_back("Math: " + math.value("verdict", std::string("–")) + ".");
  if (const json seg = doc.value("throughput", json()); seg.value("contended", false))
    t.notes.push_back("The throughput was measured while another process used the CPU: no verdict is taken from it.");
  t.notes.push_back(referencesNote(doc.value("references", json())));
  if (doc.value("target", json()).is_string()) t.notes.push_back("Target: " + doc["target"].get<std::string>() + ".");
  t.notes.push_back("Time to target = start-up + samples to target ÷ train samples/s + evaluations × evaluation time, "
                    "each part measured where it is precise; `--whole-runs` measures it with whole runs in pairs instead.");
  if (doc.value("status", std::string()) == proto::kStatusCancelled)
    t.notes.push_back("Cancelled: the same command on the same --out continues from what was measured.");
  return t;
}

}  // namespace wb::experiment
