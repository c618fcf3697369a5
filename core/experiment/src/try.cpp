// `try` on the runner: a plan of one variant, its record try.json and its table.
#include "wb/experiment/try.h"

#include "wb/experiment/composed_try.h"

#include <algorithm>
#include <cmath>

#include "wb/common/fs.h"
#include "wb/common/paths.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/compare/compare.h"
#include "wb/stats/estimate_json.h"
#include "wb/records/host.h"
#include "wb/proto/record_files.h"

namespace wb::experiment {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Plan planOf(const TryOptions& o) {
  Plan p;
  p.steps = 2;
  p.reference = {"baseline", "the baseline", "00-baseline", 0, o.baseline};
  p.variants.push_back({"variant", o.setting.empty() ? std::string("the variant") : o.setting, "01-variant", 1, o.variant});
  p.user_command = o.user_command;
  p.variants.front().command = o.variant_command;
  p.seed_per_pair = true;  // whole runs measure the seed's noise too, as by parts does
  return p;
}

// The variant runs what the baseline runs: an A/A check.
bool sameRuns(const TryOptions& o) {
  if (o.variant_command && o.variant_command->text != o.user_command.text) return false;
  json x = proto::configToJson(o.baseline), y = proto::configToJson(o.variant);
  x.erase("name"), y.erase("name");
  return x == y;
}

// The median of one metric over the counted pairs' runs of one side.
std::optional<double> medianOf(const std::vector<records::RunRecord>& runs, const VariantRuns& v,
                               std::optional<double> target, std::optional<double> (*pick)(const compare::RunMetrics&)) {
  std::vector<double> xs;
  for (size_t i = 0; i < runs.size(); ++i)
    if (v.counted(i))
      if (auto x = pick(compare::computeMetrics(runs[i], target))) xs.push_back(*x);
  if (xs.empty()) return std::nullopt;
  return stats::median(xs);
}

std::optional<double> ttt(const compare::RunMetrics& m) { return m.time_to_target_s; }
std::optional<double> sps(const compare::RunMetrics& m) { return m.train_samples_per_s; }
std::optional<double> wall(const compare::RunMetrics& m) { return m.wall_s; }

// The pairs so far: each pair's runs, the estimates and each measure's medians over the counted ones.
void addPairs(const TryOptions& o, const Outcome& outcome, proto::TryRecord& r) {
  const VariantRuns& v = outcome.variants.front();
  for (size_t i = 0; i < v.pairs.size(); ++i)
    r.runs.push_back({v.pairs[i].number, v.pairs[i].variant_first, v.counted(i), v.pairs[i].reference_dir, v.pairs[i].variant_dir,
                      v.pairs[i].seed});
  const PairEstimates e = estimatePairs(v, outcome.target_acc, o.policy.sequential());
  r.estimate = {{"to_target", stats::estimateJson(e.to_target)}, {"throughput", stats::estimateJson(e.throughput)},
                {"wall", stats::estimateJson(e.wall)}};
  for (auto [name, pick] : {std::pair{"time_to_target_s", &ttt}, std::pair{"train_samples_per_s", &sps}, std::pair{"wall_s", &wall}})
    r.medians[name] = {medianOf(v.references, v, outcome.target_acc, pick).value_or(NAN),
                       medianOf(v.variants, v, outcome.target_acc, pick).value_or(NAN)};
  r.pairs = v.countedPairs();
  r.settled = v.settled;
  r.reached = e.reached;
}

}  // namespace

proto::TryRecord tryRecordOf(const TryOptions& o, const Outcome& outcome, const std::string& status) {
  proto::TryRecord r;
  r.status = status;
  r.cancelled_at = outcome.cancelled_at;
  r.speedup = o.speedup;
  r.setting = o.setting;
  r.method_reason = o.method_reason;
  r.measured_at = wb::utcNowIso();
  r.baseline = {"the baseline", o.baseline};
  r.variant = {o.setting, o.variant};
  r.same_config = sameRuns(o);
  const TryTarget target = tryTarget(o.policy.target_acc, o.reference_runs, &outcome);
  r.target_acc = target.acc().value_or(NAN);
  if (target.target) r.target = target.describe(), r.target_source = target.source;
  r.noise_band = o.policy.floor_band;
  r.min_effect = o.policy.min_effect;
  r.max_pairs = o.policy.max_pairs;
  r.fixed_pairs = o.policy.fixed_pairs;
  r.run_command = o.user_command.text;
  if (o.variant_command) r.variant_command = o.variant_command->text;
  if (!outcome.variants.empty()) addPairs(o, outcome, r);
  return r;
}

json tryJson(const TryOptions& o, const Outcome& outcome, const std::string& status) {
  proto::TryRecord r = tryRecordOf(o, outcome, status);
  r.answer = tryAnswer(r);
  return proto::tryRecordJson(r);
}

TryTarget tryTarget(std::optional<double> user, const std::vector<records::RunRecord>& references, const Outcome* pairs) {
  TryTarget t;
  std::vector<const records::RunRecord*> finished;
  for (const auto& r : references)
    if (r.status == proto::kStatusOk || r.status == proto::kStatusEarlyStopped) finished.push_back(&r);
  if (user) t.target = compare::fairTargetOf(user, {}), t.source = "your target";
  else if (!finished.empty()) {
    t.target = compare::fairTargetOf(std::nullopt, finished);
    t.source = "the experiment's " + std::to_string(finished.size()) + " reference runs";
  } else if (pairs) {
    t.target = referenceFairTarget(*pairs, std::nullopt);
    int n = 0;
    for (const auto& v : pairs->variants) n += static_cast<int>(v.pairs.size());
    n += static_cast<int>(pairs->lone_reference.size());
    t.source = "the baseline's runs of " + std::to_string(n) + (n == 1 ? " pair" : " pairs");
  }
  if (!t.target) t.source.clear();
  return t;
}

std::string TryTarget::describe() const {
  if (!target) return "";
  return target->describe() + (source.empty() || target->user_set ? std::string() : ", from " + source);
}

Result<TryResult> runTry(const TryOptions& options, const Hooks& hooks) {
  if (auto st = keepUnreadableResult(options.out / proto::kTryFile, hooks); !st.ok()) return st.error();
  if (auto st = keepTryInputs(options); !st.ok()) return st.error();
  const TryOptions& o = options;
  Policy policy = o.policy;  // the experiment's reference runs' target, when it has them, is the pairs' too
  if (const TryTarget t = tryTarget(o.policy.target_acc, o.reference_runs, nullptr); t.target) {
    policy.target_acc = t.acc();
    if (hooks.log) std::fprintf(hooks.log, "target: %s\n", t.describe().c_str());
  }
  Hooks h = hooks;
  h.on_pair = [&](const Outcome& outcome) {
    (void)writeFileAtomic(o.out / proto::kTryFile, tryJson(o, outcome, "running").dump(2) + "\n");
    if (hooks.on_pair) hooks.on_pair(outcome);
  };
  auto outcome = runPairs(planOf(o), policy, o.out, h);
  if (!outcome.ok()) return outcome.error();
  TryResult r;
  r.outcome = std::move(*outcome);
  const std::string status =
      r.outcome.cancelled ? proto::kStatusCancelled : r.outcome.failed ? proto::kStatusFailed : proto::kStatusOk;
  r.doc = tryJson(o, r.outcome, status);
  if (!r.outcome.variants.empty())
    r.estimates = estimatePairs(r.outcome.variants.front(), r.outcome.target_acc, o.policy.sequential());
  if (auto st = writeFileAtomic(o.out / proto::kTryFile, r.doc.dump(2) + "\n"); !st.ok()) return st.error();
  return r;
}

namespace {

render::Cell valueCell(const json& medians, const char* metric, const char* side, std::string (*fmt)(double)) {
  const json v = medians.value(metric, json::object()).value(side, json());
  return v.is_number() ? render::Cell::num(fmt(v.get<double>()), v.get<double>()) : render::Cell::str("–");
}

render::Cell estimateCell(const json& est) {
  const stats::SpeedupEstimate e = stats::estimateFromJson(est);
  if (!std::isfinite(e.point)) return render::Cell::str("–");
  render::Cell c = render::Cell::num(stats::formatEstimate(e), e.point);
  return c;
}

}  // namespace

namespace {
std::string runsIn(const std::string& command) {
  return command.empty() ? std::string("workbench-cli run") : "`" + command + "`";
}
// "Each pair trained its own seed (1001-1005), both its runs the same: ..." from the record's runs.
std::string pairSeedsNote(const json& doc) {
  int64_t lo = 0, hi = 0;
  for (const json& run : doc.value("runs", json::array())) {
    const int64_t s = run.is_object() ? run.value("seed", int64_t{0}) : 0;
    if (s <= 0) return "";  // a try from before pairs had their own seeds: every run trained the config's
    lo = lo ? std::min(lo, s) : s, hi = std::max(hi, s);
  }
  if (hi == 0) return "";
  const std::string seeds = lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
  return "Each pair trained its own seed (" + seeds + "), both its runs the same one: the interval holds the seed's "
         "noise as well as the host's, as the reference runs' does.";
}

}  // namespace

render::Table tryTable(const json& doc) {
  if (doc.value("method", std::string()) == "composed") return composedTryTable(doc);
  render::Table t;
  const json target = doc.value("target_acc", json());
  const std::string targetText = target.is_number() ? wb::fmtAccuracy(target.get<double>()) : std::string("target");
  t.title = "Try: " + doc.value("setting", std::string("the variant")) + " against the baseline";
  t.columns = {{"measure", "Measure", ""}, {"baseline", "Baseline", ""}, {"variant", "Variant", ""}, {"speedup", "Speedup", "x"}};
  const json medians = doc.value("medians", json::object()), est = doc.value("estimate", json::object());
  t.rows.push_back({render::Cell::str("Time to " + targetText), valueCell(medians, "time_to_target_s", "baseline", wb::fmtSeconds),
                    valueCell(medians, "time_to_target_s", "variant", wb::fmtSeconds),
                    doc.value("reached", false) ? estimateCell(est.value("to_target", json())) : render::Cell::str("not reached")});
  t.rows.push_back({render::Cell::str("Train samples/s"), valueCell(medians, "train_samples_per_s", "baseline", wb::fmtRate),
                    valueCell(medians, "train_samples_per_s", "variant", wb::fmtRate),
                    estimateCell(est.value("throughput", json()))});
  t.rows.push_back({render::Cell::str("Wall time (steps, evaluation, checkpoints)"), valueCell(medians, "wall_s", "baseline", wb::fmtSeconds),
                    valueCell(medians, "wall_s", "variant", wb::fmtSeconds), estimateCell(est.value("wall", json()))});
  stats::Sequential seq;
  seq.floor_band = doc.value("noise_band", 0.0);
  seq.min_effect = doc.value("min_effect", stats::kDefaultMinEffect);
  seq.max_pairs = doc.value("max_pairs", kDefaultMaxPairs);
  seq.fixed_pairs = doc.value("fixed_pairs", 0);
  const std::string settled = doc.value("settled", std::string());
  t.notes.push_back(std::to_string(doc.value("pairs", 0)) + " counted pair(s), each the baseline and the variant next to each "
                    "other in time, their order alternating; medians over those pairs" +
                    (settled.empty() ? std::string(".") : "; stopped: " + settled + "."));
  t.notes.push_back(stats::describeRule(seq));
  if (const std::string seeds = pairSeedsNote(doc); !seeds.empty()) t.notes.push_back(seeds);
  if (doc.value("target", json()).is_string()) t.notes.push_back("Target: " + doc["target"].get<std::string>() + ".");
  if (doc.value("same_config", false))
    t.notes.push_back("The variant runs the baseline's config (an A/A check): any speedup shown is this machine's noise.");
  if (const json vc = doc.value("variant_command", json()); vc.is_string())
    t.notes.push_back("The baseline's runs are " + runsIn(doc.value("run_command", std::string())) + ", the variant's " +
                      runsIn(vc.get<std::string>()) + ": the speedup is of the whole pipeline, each as its own process.");
  if (doc.value("status", std::string()) == proto::kStatusCancelled)
    t.notes.push_back("Cancelled: the pair cut short gives nothing; the same command on the same --out continues.");
  return t;
}

Result<TryInputs> writeTryInputs(const std::filesystem::path& runsRoot, const std::string& key, const nlohmann::json& baseline,
                                 const nlohmann::json& variant) {
  TryInputs in;
  in.out = runsRoot / makeRunId("try-" + key);
  in.baseline_config = in.out / proto::kBaselineConfigFile;
  in.variant_config = in.out / proto::kVariantConfigFile;
  std::error_code ec;
  std::filesystem::create_directories(in.out, ec);
  if (ec || !proto::writeJsonAtomic(in.baseline_config, baseline).ok() || !proto::writeJsonAtomic(in.variant_config, variant).ok())
    return Error{Errc::Io, "cannot write the try's configs into " + in.out.string() + ": check that the runs folder is writable"};
  return in;
}

namespace {

// One input config in the try's folder: written when absent; one already there (the window's
// writeTryInputs, or this try begun before) is kept when it reads as the same config.
Status keepInput(const fs::path& file, const Config& config) {
  const json doc = proto::configToJson(config);
  std::error_code ec;
  if (!fs::exists(file, ec)) return writeFileAtomic(file, doc.dump(2) + "\n");
  auto there = proto::loadConfigFile(file.string());
  if (!there.ok())  // cut, emptied or not a config: named, and left as it is
    return makeError(Errc::InvalidConfig, file.string() + " is unreadable (" + there.error().message +
                                              "): give a new --out, or remove the file to write it again");
  if (proto::configToJson(*there) == doc) return {};
  return makeError(Errc::InvalidConfig, file.string() + " holds another try's config: give a new --out");
}

}  // namespace

Status keepTryInputs(const TryOptions& o) {
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (auto st = keepInput(o.out / proto::kBaselineConfigFile, o.baseline); !st.ok()) return st;
  if (o.variant_command) return {};  // the variant is a command, not a config to use
  return keepInput(o.out / proto::kVariantConfigFile, o.variant);
}

bool usableTryFolder(const std::filesystem::path& out, const std::vector<std::filesystem::path>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(out, ec)) return true;
  if (!fs::is_directory(out, ec)) return false;
  if (fs::is_empty(out, ec) || holdsPairs(out) || fs::exists(out / "parts", ec)) return true;
  for (const auto& entry : fs::directory_iterator(out, ec)) {
    const std::string name = entry.path().filename().string();
    const bool own = name == proto::kBaselineConfigFile || name == proto::kVariantConfigFile;  // keepTryInputs checks them
    const bool input = own || std::any_of(inputs.begin(), inputs.end(), [&](const fs::path& p) { return !p.empty() && fs::equivalent(entry.path(), p, ec); });
    if (!input) return false;
  }
  return !ec;
}

}  // namespace wb::experiment
