// The runner's loop: rounds over the variants not yet settled, one pair each, the order of a
// pair alternating with its number and the variant's place (pair 1 of the first variant runs the
// reference first, pair 2 the variant first, ...), so neither side always takes the later minute.
#include "wb/experiment/paired_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>

#include "pairs_file.h"
#include "wb/experiment/reference_runs.h"
#include "wb/common/clock.h"
#include "wb/launch/command_run.h"
#include "wb/launch/launcher.h"
#include "wb/proto/command_template.h"
#include "wb/proto/event_types.h"
#include "wb/proto/experiment_events.h"
#include "wb/proto/events.h"
#include "wb/compare/compare.h"
#include "wb/stats/estimate_json.h"
#include "wb/render/table.h"

namespace wb::experiment {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool endedOk(const std::string& status) { return status == proto::kStatusOk || status == proto::kStatusEarlyStopped; }

// The reference, then the variants.
std::vector<const Arm*> allArms(const Plan& plan) {
  std::vector<const Arm*> arms{&plan.reference};
  for (const Arm& v : plan.variants) arms.push_back(&v);
  return arms;
}


class Runner {
 public:
  Runner(const Plan& plan, const Policy& policy, const fs::path& out, const Hooks& hooks)
      : plan_(plan), policy_(policy), out_(out), hooks_(hooks) {
    state_.plan = plan;
    state_.command = hooks.command;
    for (const auto& a : plan.variants) o_.variants.push_back({a, {}, {}, {}, {}, {}, 0});
  }
  Result<Outcome> run();

 private:
  bool stopped() const { return hooks_.stopRequested(); }
  void say(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
  void emit(const json& ev) const {
    hooks_.emit(ev);
  }
  template <class E>
  json toEvent(const E& e) const { return proto::toEvent(e, -1, clock_.seconds()); }

  Status checkCommand() const;
  Status resume();
  void sayLost(const PairRecord& p, const std::string& dir, const Error& why) const;
  Status save();
  void settle(VariantRuns& v);
  stats::SpeedupEstimate settlingEstimate(const VariantRuns& v) const;
  bool runPair(size_t j);
  fs::path freshDir(const std::string& stem, const std::string& partnerSuffix = {}) const;
  Result<launch::RunOutcome> launchArm(const Arm& arm, int pair, const fs::path& dir, uint64_t seed);
  // One run of `arm` into `dir` (seed 0: its config's): its record, or nullopt (could not start, or cancelled).
  std::optional<records::RunRecord> runOne(const Arm& arm, int pair, const fs::path& dir, std::string* failure,
                                           uint64_t seed = 0);
  void noteRungEnd(const Arm& arm, int pair, const fs::path& dir, const std::string& status, const std::string& error,
                   const records::RunRecord* rec);
  json estimatesJson(const VariantRuns& v) const;
  Status runLoneReference();

  const Plan& plan_;
  const Policy& policy_;
  fs::path out_;
  const Hooks& hooks_;
  PairsState state_;
  Outcome o_;
  Stopwatch clock_;
};

void Runner::say(const char* fmt, ...) const {
  if (!hooks_.log) return;
  va_list args;
  va_start(args, fmt);
  std::vfprintf(hooks_.log, fmt, args);
  va_end(args);
}

Status Runner::save() { return savePairs(out_, state_); }

json Runner::estimatesJson(const VariantRuns& v) const {
  const PairEstimates e = estimatePairs(v, o_.target_acc, policy_.sequential());
  return {{"to_target", stats::estimateJson(e.to_target)}, {"throughput", stats::estimateJson(e.throughput)},
          {"wall", stats::estimateJson(e.wall)}, {"reached", e.reached}};
}

// A finished pair that runs again because one of its run folders is gone or no longer loads:
// said on the log and as a warning event, naming the pair and the folder.
void Runner::sayLost(const PairRecord& p, const std::string& dir, const Error& why) const {
  std::error_code ec;
  const bool gone = !fs::exists(out_ / dir, ec);
  const std::string message = p.key + ", pair " + std::to_string(p.number) + ": its run folder " + dir +
                              (gone ? " is gone" : " does not load (" + why.message + ")") + ": the pair runs again";
  say("%s\n", message.c_str());
  emit(toEvent(proto::WarningEvent{message, (out_ / dir).string()}));
}

// Reloads the finished pairs of this plan from out/pairs.json; a pair whose folders no longer
// load is dropped (and run again, said why).
Status Runner::resume() {
  if (!holdsPairs(out_)) return {};
  std::string lone;
  auto pairs = loadPairs(out_, plan_, &lone);
  if (!pairs.ok()) return pairs.error();
  for (const auto& p : *pairs) {
    for (auto& v : o_.variants) {
      if (v.arm.key != p.key) continue;
      auto a = records::loadRun(out_ / p.reference_dir);
      auto b = records::loadRun(out_ / p.variant_dir);
      if (!a.ok() || !b.ok()) {
        sayLost(p, a.ok() ? p.variant_dir : p.reference_dir, a.ok() ? b.error() : a.error());
        break;
      }
      v.pairs.push_back(p);
      v.references.push_back(std::move(*a));
      v.variants.push_back(std::move(*b));
      state_.pairs.push_back(p);
      o_.resumed = true;
    }
  }
  if (!lone.empty())
    if (auto r = records::loadRun(out_ / lone); r.ok()) o_.lone_reference.push_back(std::move(*r)), state_.lone_reference = lone;
  o_.target_acc = referenceTarget(o_, policy_.target_acc);
  return {};
}

// The estimate whose verdict settles variant v: the headline's, or the throughput's (trials).
stats::SpeedupEstimate Runner::settlingEstimate(const VariantRuns& v) const {
  const PairEstimates e = estimatePairs(v, o_.target_acc, policy_.sequential());
  return policy_.settle_on_throughput ? e.throughput : e.headline(o_.target_acc.has_value());
}

// Why variant v takes no more pairs ("" while it still does).
void Runner::settle(VariantRuns& v) {
  v.spent_s = 0;
  bool failed = !v.failures.empty();
  for (size_t i = 0; i < v.pairs.size(); ++i) {
    for (const auto* r : {&v.references[i], &v.variants[i]}) {
      const auto m = compare::computeMetrics(*r, std::nullopt);
      v.spent_s += m.run_wall_s.value_or(m.wall_s.value_or(0.0));
      failed = failed || !endedOk(r->status);
    }
  }
  const int usable = v.usablePairs();  // contended and set-aside pairs are replaced, up to rerun_contended
  const int tried = static_cast<int>(v.pairs.size());
  if (failed) v.settled = "failed";
  else if (policy_.fixed_pairs > 0)
    v.settled = usable >= policy_.fixed_pairs || tried >= policy_.fixed_pairs + policy_.rerun_contended ? "fixed" : "";
  else if (usable > 0 && settlesOnLook(settlingEstimate(v), policy_))
    v.settled = "clear";
  else if (usable >= policy_.max_pairs || tried >= policy_.max_pairs + policy_.rerun_contended) v.settled = "max pairs";
  else if (v.spent_s >= policy_.budget_s) v.settled = "budget";
  else v.settled.clear();
}

void Runner::noteRungEnd(const Arm& arm, int pair, const fs::path& dir, const std::string& status, const std::string& error,
                         const records::RunRecord* rec) {
  proto::RungEndEvent ev;
  ev.index = arm.index;
  ev.key = arm.key;
  ev.round = pair;
  ev.run_dir = dir.string();
  ev.status = status;
  if (!error.empty()) ev.error = error;
  if (rec) {
    const auto m = compare::computeMetrics(*rec, std::nullopt);
    ev.wall_s = m.wall_s.value_or(proto::kUnknown);
    ev.best_val_acc = m.best_val_acc.value_or(proto::kUnknown);
    ev.contended = m.contention.contended;
    say("    %s in %s, best val acc %s%s\n", status.c_str(), m.wall_s ? wb::fmtSeconds(*m.wall_s).c_str() : "?",
        m.best_val_acc ? wb::fmtAccuracy(*m.best_val_acc).c_str() : "–", m.contention.contended ? " (contended)" : "");
  }
  emit(toEvent(ev));
}

// The arm's run into `dir`, its config named for the folder (the run list and `compare` tell
// them apart).
Result<launch::RunOutcome> Runner::launchArm(const Arm& arm, int pair, const fs::path& dir, uint64_t seed) {
  const UserCommand& command = plan_.commandOf(arm);
  Config config = arm.config;
  if (seed != 0) config.seed = seed;
  if (command.set())
    if (auto line = proto::expandCommand(command.text, config, dir.string()); line.ok()) say("    $ %s\n", line->c_str());
  config.name += " / " + dir.filename().string();
  return launchOne(config, dir, command, hooks_.cli_path, arm.key + ", pair " + std::to_string(pair), [this](const json& ev) {
    if (proto::isEvent<proto::ErrorEvent>(ev)) say("    error: %s\n", proto::readErrorEvent(ev).message.c_str());
  });
}

std::optional<records::RunRecord> Runner::runOne(const Arm& arm, int pair, const fs::path& dir, std::string* failure,
                                                 uint64_t seed) {
  emit(toEvent(proto::RungStartEvent{arm.index, plan_.steps, arm.key, arm.label, pair, dir.string()}));
  say("  %s: %s\n", arm.key.c_str(), dir.filename().c_str());
  auto outcome = launchArm(arm, pair, dir, seed);
  if (!outcome.ok()) {
    *failure = dir.filename().string() + " could not start: " + outcome.error().message;
    say("    could not start: %s\n", outcome.error().message.c_str());
    noteRungEnd(arm, pair, dir, "not-started", outcome.error().message, nullptr);
    return std::nullopt;
  }
  const std::string error = outcome->status == proto::kStatusFailed ? outcome->summary.error.value_or("") : "";
  if (!error.empty()) say("    failed: %s\n", error.c_str());
  auto rec = records::loadRun(dir);
  if (!rec.ok()) {
    *failure = error.empty() ? rec.error().message : error;
    noteRungEnd(arm, pair, dir, "not-started", *failure, nullptr);
    return std::nullopt;
  }
  noteRungEnd(arm, pair, dir, outcome->status, error, &*rec);
  if (outcome->status == proto::kStatusCancelled) {  // by us (stop), or by someone else: then a failure
    *failure = dir.filename().string() + " was cancelled";
    return std::nullopt;
  }
  return std::move(*rec);
}

// out/runs/<stem> (and <stem><partnerSuffix>) when neither exists, else the same with "-r2",
// "-r3", …: a pair or run cut before and run again never replaces what its first attempt wrote
// (the finished half of a cut pair is a record too; it is just not counted).
fs::path Runner::freshDir(const std::string& stem, const std::string& partnerSuffix) const {
  for (int attempt = 1;; ++attempt) {
    const std::string s = attempt == 1 ? stem : stem + "-r" + std::to_string(attempt);
    std::error_code ec;
    const bool taken = fs::exists(out_ / "runs" / s, ec) || (!partnerSuffix.empty() && fs::exists(out_ / "runs" / (s + partnerSuffix), ec));
    if (!taken) return out_ / "runs" / s;
  }
}

// One pair of variant j; false when it was cut (cancelled) or could not run.
bool Runner::runPair(size_t j) {
  VariantRuns& v = o_.variants[j];
  const int number = static_cast<int>(v.pairs.size()) + 1;
  const bool variantFirst = (number - 1 + static_cast<int>(j)) % 2 == 1;
  const std::string refSuffix = "-" + plan_.reference.key;
  const fs::path varDir = freshDir(v.arm.slug + "-p" + std::to_string(number), refSuffix);
  const fs::path refDir = varDir.string() + refSuffix;
  const uint64_t seed = plan_.seed_per_pair ? pairSeed(number) : 0;
  say("[%d/%d] %s, pair %d (%s first%s): %s%s\n", v.arm.index + 1, plan_.steps, v.arm.key.c_str(), number,
      variantFirst ? v.arm.key.c_str() : plan_.reference.key.c_str(),
      seed ? (", seed " + std::to_string(seed)).c_str() : "", v.arm.label.c_str(), progressTime(hooks_).c_str());
  std::optional<records::RunRecord> ref, var;
  std::string failure;
  for (int side = 0; side < 2; ++side) {
    if (stopped()) break;
    const bool variantNow = (side == 0) == variantFirst;
    auto rec = variantNow ? runOne(v.arm, number, varDir, &failure, seed) : runOne(plan_.reference, number, refDir, &failure, seed);
    if (!rec) break;
    (variantNow ? var : ref) = std::move(rec);
  }
  if (!failure.empty() && !stopped()) v.failures.push_back(failure);
  if (!ref || !var) {  // cut short: the pair gives nothing
    if (stopped()) o_.cancelled = true, o_.cancelled_at = v.arm.key;
    settle(v);
    return false;
  }
  PairRecord p{v.arm.key, number, variantFirst, fs::relative(refDir, out_).string(), fs::relative(varDir, out_).string(),
               static_cast<int64_t>(seed)};
  v.pairs.push_back(p);
  v.references.push_back(std::move(*ref));
  v.variants.push_back(std::move(*var));
  state_.pairs.push_back(p);
  o_.target_acc = referenceTarget(o_, policy_.target_acc);
  settle(v);
  proto::PairEndEvent ev{v.arm.index, v.arm.key, number, variantFirst, v.counted(v.pairs.size() - 1), v.settled, estimatesJson(v)};
  emit(toEvent(ev));
  const auto est = settlingEstimate(v);
  say("  %s after %d pair(s): %s%s\n", v.arm.key.c_str(), static_cast<int>(v.pairs.size()), stats::formatEstimate(est).c_str(),
      v.settled.empty() ? "" : (" — " + v.settled).c_str());
  return true;
}

Status Runner::runLoneReference() {
  if (!o_.lone_reference.empty() || stopped()) return {};
  const fs::path dir = freshDir(plan_.reference.slug);
  std::string failure;
  auto rec = runOne(plan_.reference, 1, dir, &failure);
  if (!rec) {
    if (stopped()) o_.cancelled = true, o_.cancelled_at = plan_.reference.key;
    else o_.failed = true;
    return {};
  }
  o_.failed = !endedOk(rec->status);
  o_.lone_reference.push_back(std::move(*rec));
  state_.lone_reference = fs::relative(dir, out_).string();
  o_.target_acc = referenceTarget(o_, policy_.target_acc);
  return {};
}

// A plan of the user's command: each variant changes only what the command's placeholders say
// (a change the command cannot be told of would be a guess, never measured).
Status Runner::checkCommand() const {
  for (const Arm* arm : allArms(plan_)) {
    const UserCommand& command = plan_.commandOf(*arm);
    if (!command.set()) continue;
    if (auto fields = proto::commandFields(command.text); !fields.ok()) {
      if (!arm->command) return fields.error();
      std::string why = fields.error().message;  // "--command: ...": the arm's own command is another option
      if (why.rfind("--command: ", 0) == 0) why = "the command of step '" + arm->key + "': " + why.substr(11);
      return makeError(fields.error().code, why);
    }
    if (arm == &plan_.reference) continue;
    if (const std::string why = proto::notMeasurableWith(command.text, plan_.reference.config, arm->config); !why.empty())
      return makeError(Errc::InvalidConfig, "step '" + arm->key + "' (" + arm->label + ") is " + why + "; or leave that change out");
  }
  return {};
}

Result<Outcome> Runner::run() {
  if (auto st = checkCommand(); !st.ok()) return st.error();
  std::error_code ec;
  fs::create_directories(out_ / "runs", ec);
  if (ec) return makeError(Errc::Io, out_.string() + ": cannot create it: " + ec.message());
  if (auto st = resume(); !st.ok()) return st.error();
  if (auto st = save(); !st.ok()) return st.error();
  if (plan_.variants.empty()) {
    if (auto st = runLoneReference(); !st.ok()) return st.error();
  }
  for (auto& v : o_.variants) settle(v);
  while (!stopped() && !o_.cancelled) {
    bool any = false;
    for (size_t j = 0; j < o_.variants.size() && !stopped(); ++j) {
      if (!o_.variants[j].settled.empty()) continue;
      any = true;
      runPair(j);
      if (auto st = save(); !st.ok()) return st.error();
      if (hooks_.on_pair) hooks_.on_pair(o_);
    }
    if (!any) break;
  }
  if (stopped() && !o_.cancelled) {
    o_.cancelled = true;  // stopped between pairs: the next variant not settled is where it stopped
    for (const auto& v : o_.variants)
      if (v.settled.empty()) {
        o_.cancelled_at = v.arm.key;
        break;
      }
  }
  for (const auto& v : o_.variants) o_.failed = o_.failed || v.settled == "failed";
  state_.status = o_.cancelled ? proto::kStatusCancelled : o_.failed ? proto::kStatusFailed : proto::kStatusOk;
  state_.cancelled_at = o_.cancelled_at;
  if (auto st = save(); !st.ok()) return st.error();
  return std::move(o_);
}

}  // namespace

Status keepUnreadableResult(const fs::path& file, const Hooks& hooks) {
  auto said = proto::keepUnreadableResult(file);
  if (!said.ok()) return said.error();
  if (!said->empty() && hooks.log) std::fprintf(hooks.log, "%s\n", said->c_str());
  return {};
}

Result<launch::RunOutcome> launchOne(const Config& config, const fs::path& dir, const UserCommand& command,
                                     const std::string& cli_path, const std::string& who,
                                     const std::function<void(const json&)>& on_event) {
  if (command.set()) {
    auto line = proto::expandCommand(command.text, config, dir.string());
    if (!line.ok()) return line.error();
    launch::CommandOptions co;
    co.run_dir = dir.string();
    co.arm = who;
    co.idle_timeout_s = command.idle_timeout_s;
    co.on_event = on_event;
    return launch::launchCommand(*line, co);
  }
  launch::LaunchOptions lo;
  lo.cli_path = cli_path;
  lo.run_dir = dir.string();
  lo.overwrite = false;  // never: a run cut before is measured afresh in a new folder
  lo.on_event = on_event;
  return launch::launchRun(config, lo);
}

Result<Outcome> runPairs(const Plan& plan, const Policy& policy, const fs::path& out, const Hooks& hooks) {
  return Runner(plan, policy, out, hooks).run();
}

uint64_t pairSeed(int number) { return kFirstReferenceSeed + static_cast<uint64_t>(std::max(number, 1) - 1); }

std::string progressTime(const Hooks& hooks, int done, int total) {
  const double so_far = std::chrono::duration<double>(std::chrono::steady_clock::now() - hooks.started).count();
  std::string s = " · " + wb::fmtSeconds(so_far) + " so far";
  if (done > 0 && total > done) s += ", about " + wb::fmtSeconds(so_far / done * (total - done)) + " left";
  return s;
}

}  // namespace wb::experiment
