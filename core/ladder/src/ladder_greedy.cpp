// The greedy ladder (the default): the steps one after another, each as pairs against the
// configuration kept so far, in a folder of its own (out/steps/<slug>/: the paired runner's, so
// each step resumes by itself); a step is kept when it is clearly faster and still reaches the
// target, else dropped and left out of what follows; last, the configuration kept against the
// baseline (the "kept" step). A continued ladder replays its decisions from the steps' finished
// pairs, so it takes the same path. out/plan.json refuses another plan's folder.
#include "ladder_greedy.h"

#include <algorithm>

#include "wb/common/clock.h"
#include "wb/common/fs.h"
#include "wb/common/speedups.h"
#include "wb/ladder/speedup_effects.h"
#include "wb/proto/config_json.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/advice/busy_machine.h"
#include "wb/stats/estimate_json.h"
#include "wb/proto/record_files.h"

namespace wb::ladder {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A step the host's load kept from being measured: not dropped for being slow.
constexpr const char* kNotMeasured = "not measured: ";

// What makes two plans the same ladder: the steps' keys, skips and configs.
json planRecord(const std::vector<LadderStep>& plan) {
  json steps = json::array();
  for (const auto& s : plan)
    steps.push_back({{"key", s.key}, {"skipped", s.skipped}, {"isolated", s.isolated}, {"config", proto::configToJson(s.config)}});
  return {{"greedy", true}, {"steps", steps}};
}

class GreedyLadder {
 public:
  explicit GreedyLadder(const LadderOptions& o);
  Result<LadderOutcome> run();

 private:
  bool stopped() const { return o_.hooks.stopRequested(); }
  void emit(const json& ev) const {
    o_.hooks.emit(ev);
  }
  Status checkFolder() const;
  std::string skippedByWhatWasKept(size_t i) const;
  std::string nothingKept() const;
  Status runStep(size_t i);
  std::optional<experiment::TryOptions> byPartsTry(size_t i, bool vsBaseline) const;
  Status runStepByParts(size_t i, const experiment::TryOptions& t);
  Status runBaselineAlone();
  experiment::Arm baselineArm() const;
  experiment::Arm keptArm() const;
  experiment::Hooks hooks(size_t i);
  void take(size_t i, const experiment::Outcome& o);
  void decide(size_t i, const experiment::Outcome& o);
  void decideByParts(size_t i, const json& tryDoc);
  void keep(size_t i);
  Ladder summary(const std::string& status) const;
  void writeOutputs(const std::string& status);

  const LadderOptions& o_;
  std::vector<LadderStep> plan_;  // the options' plan and the kept step
  std::vector<LadderStepRuns> steps_;
  size_t baseline_ = 0;
  std::optional<size_t> baselineSource_;  // the step whose reference runs are the baseline's row
  Config kept_;
  std::string keptKey_ = "baseline", keptWords_;
  size_t keptIndex_ = 0;
  int keptCount_ = 0;
  bool keptVsBaseline_ = false;  // the last step kept was measured against the baseline
  std::optional<double> target_;
  bool cancelled_ = false, resumed_ = false;
  std::string cancelledAt_;
  Stopwatch clock_;
  Status written_;
};

GreedyLadder::GreedyLadder(const LadderOptions& o) : o_(o), plan_(o.plan) {
  for (size_t i = 0; i < plan_.size(); ++i)
    if (plan_[i].key == "baseline") baseline_ = i;
  kept_ = plan_[baseline_].config;
  keptIndex_ = baseline_;
  LadderStep kept;
  kept.key = kKeptStep;
  kept.added = "the steps kept, together, against the baseline";
  kept.config = kept_;
  plan_.insert(std::find_if(plan_.begin(), plan_.end(), [](const LadderStep& s) { return s.isolated; }), kept);
  for (const auto& s : plan_) steps_.push_back({s, {}, {}, {}, {}, {}, false, {}});
  target_ = o_.policy.target_acc;
}

Status GreedyLadder::checkFolder() const {
  std::error_code ec;
  if (fs::exists(experiment::pairsFile(o_.out), ec))
    return makeError(Errc::InvalidConfig, o_.out.string() + " holds a cumulative ladder: continue it with --cumulative, "
                                                            "or choose a new --out");
  const fs::path file = o_.out / proto::kPlanFile;
  const proto::StoredRecord doc = proto::readRecordFile(file);
  if (doc.missing()) return {};
  if (doc.unreadable())
    return proto::unreadableError(file, doc.why, "its runs in " + o_.out.string() + " are kept: restore it from a copy, or choose a new --out");
  const json want = planRecord(o_.plan);
  const json had = doc.doc.value("steps", json());
  if (had == want["steps"]) return {};
  std::string differs = "the number of steps";
  for (size_t i = 0; had.is_array() && i < std::min(had.size(), want["steps"].size()); ++i)
    if (had[i] != want["steps"][i]) {
      differs = "step " + proto::stringOr(want["steps"][i], "key", "?");
      break;
    }
  const std::string started = proto::stringOr(doc.doc, "command", "");
  return makeError(Errc::InvalidConfig, o_.out.string() + " holds the pairs of another plan (" + differs +
                                            " differs): continue it with the options it was started with" +
                                            (started.empty() ? "" : " (" + started + ")") + ", or choose a new --out");
}

// A speedup that helps only with more devices is not measured when more devices were measured and
// not kept: sharding (it splits data parallel's optimiser state to save memory, and never makes
// data parallel's steps faster) would measure the devices again, with its own cost on top; one
// whose descriptor says it cannot help the configuration kept (accumulation on one device saves no
// communication, only makes the batch larger) would change the training and not its speed. The
// plan checked each against every step before it, the devices among them.
std::string GreedyLadder::skippedByWhatWasKept(size_t i) const {
  const LadderStep& s = plan_[i];
  const Speedup* sp = findSpeedup(s.key);
  if (s.isolated || !sp || kept_.speedups.devices > 1) return "";
  bool devicesDropped = false;
  for (size_t k = 0; k < i; ++k) devicesDropped = devicesDropped || (plan_[k].key == speedup::kDevices && !steps_[k].step.skipped);
  if (!devicesDropped) return "";
  if (sp->availability == Availability::NeedsDevices)
    return "more devices were measured and not kept: " + std::string(sp->label) + " needs them (" + sp->needs +
           ") and does not make data parallel's steps faster";
  const std::string cannot = sp->cannotHelp ? sp->cannotHelp(withSpeedupOf(kept_, s.config, s.key), o_.here) : "";
  return cannot.empty() ? "" : "more devices were measured and not kept, and " + cannot;
}

// Why nothing was kept: the baseline was the fastest measured, or some steps could not be measured
// (contended) and the answer is not in for them.
std::string GreedyLadder::nothingKept() const {
  std::string contended;
  std::vector<compare::Contention> met;  // what the steps that could not be measured met
  for (const auto& row : steps_) {
    if (row.decision.rfind(kNotMeasured, 0) != 0) continue;
    contended += (contended.empty() ? "" : ", ") + row.step.key;
    for (const auto* runs : {&row.runs, &row.references})
      for (const auto& run : *runs) met.push_back(compare::contentionOf(run));
  }
  if (contended.empty()) return "no step was kept: the baseline is the fastest configuration measured";
  std::vector<const compare::Contention*> seen;
  for (const auto& c : met) seen.push_back(&c);
  const std::string advice = advice::busyMachineAdvice(advice::busyMachineOf(seen));
  return "no step was kept, but " + contended + " could not be measured (another process used the CPU): the baseline is "
         "the fastest of what was measured. " + (advice.empty() ? "Rerun the ladder on an idle machine for the rest." : advice);
}

experiment::Arm GreedyLadder::baselineArm() const {
  const LadderStep& b = plan_[baseline_];
  return {b.key, b.added, b.slug(static_cast<int>(baseline_)), static_cast<int>(baseline_), b.config};
}

experiment::Arm GreedyLadder::keptArm() const {
  return {"kept", "the configuration kept so far (" + keptWords_ + ")", "kept", static_cast<int>(keptIndex_), kept_};
}

experiment::Hooks GreedyLadder::hooks(size_t i) {
  experiment::Hooks h = o_.hooks;
  h.on_pair = [this, i](const experiment::Outcome& o) {
    take(i, o);
    writeOutputs("running");
  };
  return h;
}

void GreedyLadder::take(size_t i, const experiment::Outcome& o) {
  if (o.variants.empty()) {
    steps_[baseline_].runs = o.lone_reference;
    return;
  }
  const experiment::VariantRuns& v = o.variants.front();
  LadderStepRuns& s = steps_[i];
  s.runs = v.variants;
  s.references = v.references;
  s.counted.clear();
  for (size_t k = 0; k < v.pairs.size(); ++k) s.counted.push_back(v.counted(k));
  s.failures = v.failures;
  s.settled = v.settled;
  if (baselineSource_ == i) steps_[baseline_].runs = v.references;
}

// Kept only when it pays: counted, reaching the target, and clearly faster than what was kept
// before it. Within noise is dropped too: such steps each cost a little below the noise, and kept
// one after another they add up (a first ladder kept five of them and ended 0.62× the baseline).
void GreedyLadder::decide(size_t i, const experiment::Outcome& o) {
  const LadderStep& step = steps_[i].step;
  if (step.isolated || step.key == kKeptStep || o.variants.empty()) return;
  const experiment::VariantRuns& v = o.variants.front();
  const experiment::PairEstimates e = experiment::estimatePairs(v, target_, o_.policy.sequential());
  std::string why;
  bool keep = false;
  if (v.settled == "failed" || !v.failures.empty()) {
    why = "dropped: a run failed";
  } else if (v.countedPairs() == 0) {
    why = std::string(kNotMeasured) + "contended (every pair was measured while another process used the CPU)";
  } else if (target_ && !e.reached) {
    double best = 0;
    for (const auto& r : v.variants) best = std::max(best, compare::computeMetrics(r, target_).best_val_acc.value_or(0.0));
    why = "dropped: did not reach the target (best " + wb::fmtAccuracy(best) + " < " + wb::fmtAccuracy(*target_) + ")";
  } else {
    const stats::SpeedupEstimate& h = e.headline(target_.has_value());
    keep = h.verdict == stats::Verdict::Faster;
    why = std::string(keep                                       ? "kept: "
                      : h.verdict == stats::Verdict::Slower     ? "dropped: slower, "
                                                                 : "dropped: no gain shown, ") +
          stats::formatEstimate(h);
  }
  steps_[i].decision = why;
  if (keep) this->keep(i);
}

void GreedyLadder::keep(size_t i) {
  const LadderStep& step = steps_[i].step;
  keptVsBaseline_ = keptKey_ == "baseline";
  kept_ = step.config;
  keptKey_ = step.key;
  keptIndex_ = i;
  ++keptCount_;
  keptWords_ += (keptWords_.empty() ? "" : ", ") + speedupSetting(step.config, step.key);
}

// By parts, the same rule: kept only when the composed time to the target is clearly faster.
void GreedyLadder::decideByParts(size_t i, const json& doc) {
  const json to = doc.value("estimate", json::object()).value("to_target", json::object());
  const stats::SpeedupEstimate e = stats::estimateFromJson(to);
  const std::string words = doc.value("words", std::string("no estimate"));
  const bool keepIt = doc.value("reached", false) && e.verdict == stats::Verdict::Faster;
  steps_[i].decision = to.value("verdict", std::string()) == "contended" ? kNotMeasured + words
                       : keepIt                                        ? "kept: " + words
                       : e.verdict == stats::Verdict::Slower          ? "dropped: slower, " + words
                                                                       : "dropped: no gain shown, " + words;
  if (keepIt) keep(i);
}

// The step as a try by parts when the ladder measures by parts and its change switches in one
// process (against the configuration it is measured against); nullopt: pairs.
std::optional<experiment::TryOptions> GreedyLadder::byPartsTry(size_t i, bool vsBaseline) const {
  if (!o_.by_parts) return std::nullopt;
  const LadderStep& s = steps_[i].step;
  experiment::TryOptions t;
  t.baseline = vsBaseline ? plan_[baseline_].config : kept_;
  t.variant = s.config;
  t.speedup = s.key == kKeptStep ? std::string() : s.key;
  t.setting = s.added;
  t.out = o_.out / "steps" / s.slug(static_cast<int>(i));
  t.policy = o_.policy;  // the user's target, else the reference runs' own fair target (over their seeds)
  t.user_command = o_.user_command;
  if (!experiment::composedUnavailable(t).empty()) return std::nullopt;
  return t;
}

// A step by parts: a failed measurement drops it (its row says why); a folder of another
// experiment's reference runs stops the ladder (InvalidConfig).
Status GreedyLadder::runStepByParts(size_t i, const experiment::TryOptions& t) {
  if (o_.hooks.log)
    std::fprintf(o_.hooks.log, "[%zu/%zu] %s: by parts -> %s%s\n", i + 1, plan_.size(), t.setting.c_str(), t.out.c_str(),
                 experiment::progressTime(o_.hooks, static_cast<int>(i), static_cast<int>(plan_.size())).c_str());
  LadderStepRuns& row = steps_[i];
  const auto index = static_cast<int64_t>(i);
  // A rung without a run folder: the step is measured, but by no run of its own to follow.
  emit(proto::toEvent(proto::RungStartEvent{index, static_cast<int64_t>(plan_.size()), row.step.key, row.step.added, 1, ""},
                      -1, clock_.seconds()));
  experiment::ComposedOptions composed = o_.composed;
  composed.futility = true;  // a step is kept only when faster: its runs stop once it cannot be shown so
  auto r = experiment::runComposedTry(t, composed, o_.hooks);
  proto::RungEndEvent end{index, row.step.key, 1, "", r.ok() ? proto::kStatusOk : proto::kStatusFailed};
  if (!r.ok()) end.error = r.error().message;
  if (!r.ok() && r.error().code == Errc::Cancelled) end.status = proto::kStatusCancelled;
  emit(proto::toEvent(end, -1, clock_.seconds()));
  if (!r.ok() && r.error().code == Errc::Cancelled) {
    cancelled_ = true, cancelledAt_ = row.step.key;
    return {};
  }
  if (!r.ok() && r.error().code == Errc::InvalidConfig) return r.error();
  if (!r.ok()) {
    row.settled = "failed";
    row.failures.push_back(r.error().message);
    row.decision = "dropped: " + r.error().message;
    return {};
  }
  row.by_parts = r->doc;
  row.settled = "by parts";
  decideByParts(i, r->doc);
  writeOutputs("running");
  return {};
}


// One step as pairs against the configuration kept so far (the baseline for the isolated steps
// and for the kept step), in out/steps/<slug>.
Status GreedyLadder::runStep(size_t i) {
  LadderStep& s = steps_[i].step;
  const bool kept = s.key == kKeptStep;
  if (kept) s.config = kept_, s.added = "the steps kept (" + keptWords_ + "), against the baseline";
  else if (!s.isolated) s.config = withSpeedupOf(kept_, plan_[i].config, s.key);
  const bool vsBaseline = s.isolated || kept || keptKey_ == "baseline";
  if (auto byParts = byPartsTry(i, vsBaseline)) return runStepByParts(i, *byParts);
  if (vsBaseline && !s.isolated && !kept && !baselineSource_) baselineSource_ = i;
  experiment::Plan p;
  p.steps = static_cast<int>(plan_.size());
  p.user_command = o_.user_command;
  p.reference = vsBaseline ? baselineArm() : keptArm();
  p.variants = {{s.key, s.added, s.slug(static_cast<int>(i)), static_cast<int>(i), s.config}};
  experiment::Policy policy = o_.policy;
  if (!policy.target_acc) policy.target_acc = target_;
  auto outcome = experiment::runPairs(p, policy, o_.out / "steps" / s.slug(static_cast<int>(i)), hooks(i));
  if (!outcome.ok()) return outcome.error();
  take(i, *outcome);
  resumed_ = resumed_ || outcome->resumed;
  if (outcome->cancelled) {
    cancelled_ = true;
    cancelledAt_ = s.key;
    return {};
  }
  if (!target_ && baselineSource_ == i) target_ = outcome->target_acc;  // the baseline's fair target, for every step
  decide(i, *outcome);
  return {};
}

// No step to run: the baseline once, so the ladder still says what it measured.
Status GreedyLadder::runBaselineAlone() {
  experiment::Plan p;
  p.steps = static_cast<int>(plan_.size());
  p.user_command = o_.user_command;
  p.reference = baselineArm();
  auto outcome = experiment::runPairs(p, o_.policy, o_.out / "steps" / plan_[baseline_].slug(static_cast<int>(baseline_)),
                                      hooks(baseline_));
  if (!outcome.ok()) return outcome.error();
  take(baseline_, *outcome);
  if (outcome->cancelled) cancelled_ = true, cancelledAt_ = "baseline";
  return {};
}

Ladder GreedyLadder::summary(const std::string& status) const {
  return summarizeLadder(steps_, o_.policy.target_acc, o_.policy.sequential(), {status, cancelledAt_, true});
}

void GreedyLadder::writeOutputs(const std::string& status) {
  if (!written_.ok()) return;
  written_ = writeLadderOutputs(o_.out, summary(status), steps_, nullptr);
}

Result<LadderOutcome> GreedyLadder::run() {
  if (auto st = checkFolder(); !st.ok()) return st.error();
  if (auto st = experiment::keepUnreadableResult(o_.out / proto::kLadderFile, o_.hooks); !st.ok()) return st.error();
  std::error_code ec;
  fs::create_directories(o_.out / "steps", ec);
  if (ec) return makeError(Errc::Io, o_.out.string() + ": cannot create it: " + ec.message());
  json record = planRecord(o_.plan);
  record["command"] = o_.hooks.command;  // named when another plan meets this folder
  if (auto st = writeFileAtomic(o_.out / proto::kPlanFile, record.dump(2) + "\n"); !st.ok()) return st.error();
  emit(proto::toEvent(proto::LadderEvent{o_.out.string(), o_.policy.fixed_pairs, planEventSteps(plan_)}, -1, clock_.seconds()));
  bool anyStep = false;
  for (size_t i = 0; i < plan_.size() && !cancelled_; ++i) {
    const LadderStep& s = plan_[i];
    if (s.key == "baseline" || s.skipped) continue;
    if (s.key == kKeptStep && keptKey_ == "baseline") {  // nothing paid off: the baseline is the answer
      steps_[i].step.skipped = true;
      steps_[i].step.note = anyStep ? nothingKept() : "no step ran";
      continue;
    }
    if (s.key == kKeptStep && keptCount_ == 1 && keptVsBaseline_) {  // already measured against the baseline
      LadderStepRuns& row = steps_[i];
      const LadderStep step = row.step;
      row = steps_[keptIndex_];
      row.step = step;
      row.step.config = kept_;
      row.step.added = "the one step kept (" + keptWords_ + "), against the baseline";
      row.step.note = "its pairs are " + plan_[keptIndex_].key + "'s above";
      row.decision.clear();
      continue;
    }
    if (const std::string why = skippedByWhatWasKept(i); !why.empty()) {
      steps_[i].step.skipped = true;
      steps_[i].step.note = why;
      continue;
    }
    if (stopped()) {
      cancelled_ = true, cancelledAt_ = s.key;
      break;
    }
    anyStep = anyStep || !s.isolated;
    if (auto st = runStep(i); !st.ok()) return st.error();
  }
  if (!anyStep && !cancelled_)
    if (auto st = runBaselineAlone(); !st.ok()) return st.error();
  bool failed = false;
  for (auto& s : steps_) {
    s.not_run = cancelled_ && !s.step.skipped && s.runs.empty();
    failed = failed || s.settled == "failed";
  }
  const std::string status = cancelled_ ? proto::kStatusCancelled : failed ? proto::kStatusFailed : proto::kStatusOk;
  LadderOutcome out;
  out.ladder = summary(status);
  if (auto st = writeLadderOutputs(o_.out, out.ladder, steps_, nullptr); !st.ok()) return st.error();
  if (!cancelled_) {  // what to run: `workbench-cli run --config kept.json`
    Config kept = kept_;
    kept.name = plan_[baseline_].config.name + " (kept by the ladder)";
    if (auto st = writeFileAtomic(o_.out / proto::kKeptConfigFile, proto::configToJson(kept).dump(2) + "\n"); !st.ok()) return st.error();
  }
  out.cancelled = cancelled_;
  out.failed = failed;
  out.resumed = resumed_;
  emit(proto::toEvent(proto::LadderEndEvent{out.ladder.status, o_.out.string(), ladderJson(out.ladder), out.ladder.answer}, -1, clock_.seconds()));
  return out;
}

}  // namespace

Result<LadderOutcome> runGreedyLadder(const LadderOptions& options) { return GreedyLadder(options).run(); }

}  // namespace wb::ladder
