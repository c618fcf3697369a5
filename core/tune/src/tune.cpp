// The search's loop: the evaluation sweep, successive halving over the training grid, the finals
// (wb/tune/tune.h says why each). Everything it measures goes into tune.json as it comes.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "tune_internal.h"
#include "wb/common/clock.h"
#include "wb/common/fs.h"
#include "wb/proto/command_template.h"
#include "wb/proto/config_json.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/records/host.h"
#include "wb/tune/batch_finder.h"
#include "wb/proto/record_files.h"

namespace wb::tune {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string dimensionList() {
  std::string s;
  for (const auto& n : dimensionNames()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

constexpr int64_t kEvalStageValImages = 2048;   // enough batches for a steady evaluation rate
constexpr int64_t kHalvingValImages = 512;      // the halving's trials still evaluate, briefly

class TuneRun {
 public:
  explicit TuneRun(const TuneOptions& o) : o_(o) {}
  Result<TuneOutcome> run();

 private:
  bool stopped() const { return cancelled_ || o_.hooks.stopRequested(); }
  void say(const std::string& line) const {
    if (o_.hooks.log) std::fprintf(o_.hooks.log, "%s\n", line.c_str()), std::fflush(o_.hooks.log);
  }
  void emit(json ev) const {
    o_.hooks.emit(ev);
  }
  Status prepare();
  Status keepWhatTheCommandTakes();
  Status takeOver(const proto::TuneRecord& had);
  std::string givenDifference(const proto::TuneRecord& had) const;
  Status runEvalStage();
  Status runHalving();
  Status runFinals();
  std::string byPartsBlocker() const;
  Status runFinalsByParts();
  Result<experiment::Outcome> finalsRound(const std::vector<std::string>& ids, const std::string& folder,
                                          std::optional<double> target, std::vector<experiment::VariantRuns>* before);
  void judge(const experiment::Outcome& o, const stats::Sequential& seq);
  static experiment::Outcome withEarlier(const experiment::Outcome& o, const std::vector<experiment::VariantRuns>* before);
  Status checkTargetReached(const experiment::Outcome& outcome) const;
  std::optional<proto::TuneTrial> trial(const proto::TuneCandidate& c, const std::string& stage, int rung, int64_t samples,
                                        int64_t valLimit);
  void launchTrial(const proto::TuneCandidate& c, const Config& config, proto::TuneTrial& t);
  Status checkBudget(const proto::TuneTrial& first) const;
  double fullRunEstimate() const;
  double leftEstimate(int trialsLeft) const;
  void report(const proto::TuneTrial& t, const proto::TuneCandidate& c, int trialsLeft);
  const proto::TuneCandidate* candidate(const std::string& id) const;
  int64_t rungSamples(int rung) const;
  fs::path trialDir(const std::string& stem) const;
  void save();
  void keepUnreplayed();
  double trialsSpent() const;

  const TuneOptions& o_;
  proto::TuneRecord r_;
  Space space_;
  std::vector<proto::TuneTrial> previous_;  // a cut search's finished trials, by (candidate, stage, rung)
  std::vector<std::string> finalists_;
  std::map<std::string, std::string> finalsFolder_;  // a finalist's round: finals, finals-2
  Stopwatch clock_;
  double trialsHere_ = 0, trialsBefore_ = 0, finalsBefore_ = 0;
  int trialsRun_ = 0;
  bool cancelled_ = false;
  bool reused_ = false;  // the last trial came from the cut search before
  Status written_;
};

json candidatesKey(const std::vector<proto::TuneCandidate>& cs) {
  json a = json::array();
  for (const auto& c : cs) a.push_back({c.id, c.settings});
  return a;
}

const proto::TuneCandidate* TuneRun::candidate(const std::string& id) const { return findCandidate(r_, id); }

int64_t TuneRun::rungSamples(int rung) const {
  const double s = o_.trial_fraction * static_cast<double>(o_.train_images) * std::pow(o_.eta, rung);
  return std::min<int64_t>(o_.train_images, std::max<int64_t>(256, std::llround(s)));
}

fs::path TuneRun::trialDir(const std::string& stem) const {
  std::error_code ec;
  for (int attempt = 1;; ++attempt) {  // a trial cut before runs again beside it, never over it
    const fs::path p = o_.out / "trials" / (attempt == 1 ? stem : stem + "-r" + std::to_string(attempt));
    if (!fs::exists(p, ec)) return p;
  }
}

// "" when `had` started from the same config as given (its name aside); else the first field that differs.
std::string TuneRun::givenDifference(const proto::TuneRecord& had) const {
  const proto::TuneCandidate* given = findCandidate(had, "baseline");
  if (!given || given->config.is_null()) return {};
  json a = given->config, b = proto::configToJson(o_.base);
  a.erase("name"), b.erase("name");
  const json patch = json::diff(a, b);
  if (patch.empty()) return {};
  std::string field = patch[0].value("path", "");
  std::replace(field.begin(), field.end(), '/', '.');
  return "the config as given differs in " + (field.empty() ? field : field.substr(1));
}

// A search already in the folder: the same candidates continue (its finished trials are kept);
// another search is refused, naming the first candidate that differs.
Status TuneRun::takeOver(const proto::TuneRecord& had) {
  const json want = candidatesKey(r_.candidates), got = candidatesKey(had.candidates);
  std::string differs = givenDifference(had);
  if (want != got && differs.empty()) {
    differs = "the number of candidates (" + std::to_string(got.size()) + " there, " + std::to_string(want.size()) + " now)";
    for (size_t i = 0; i < std::min(want.size(), got.size()); ++i)
      if (want[i] != got[i]) {
        differs = "candidate " + want[i][0].get<std::string>() + " (" + want[i][1].dump() + " now, " + got[i][1].dump() + " there)";
        break;
      }
  }
  if (!differs.empty())
    return makeError(Errc::InvalidConfig, o_.out.string() + " holds another search (" + differs + "): continue it with the options it was started with" +
                                              (had.command.empty() ? "" : " (" + had.command + ")") + ", or choose a new --out");
  for (const auto& t : had.trials)
    if (t.status != proto::kStatusCancelled && !t.status.empty()) previous_.push_back(t);
  trialsBefore_ = had.trials_s;
  finalsBefore_ = had.finals_s;
  say("continuing the search in " + o_.out.string() + ": " + std::to_string(previous_.size()) + " finished trial(s) kept");
  return {};
}

// --command: trials need the command to take their length, and a candidate that changes a
// setting the command has no placeholder for cannot be measured: it leaves the search.
Status TuneRun::keepWhatTheCommandTakes() {
  if (!o_.user_command.set()) return {};
  if (auto st = commandTakesTrials(o_.user_command, "tune"); !st.ok()) return st;
  std::set<std::string> unread;
  for (auto* list : {&space_.eval, &space_.train})
    list->erase(std::remove_if(list->begin(), list->end(), [&](const proto::TuneCandidate& c) {
                  auto config = proto::configFromJson(c.config);
                  const auto paths = config.ok() ? proto::unreadChanges(o_.user_command.text, o_.base, *config) : std::vector<std::string>{};
                  unread.insert(paths.begin(), paths.end());
                  return !paths.empty();
                }), list->end());
  if (unread.empty()) return {};
  std::string list;
  for (const auto& path : unread) list += (list.empty() ? "" : ", ") + path;
  r_.left_out = "the candidates that change " + list + " (the command has no placeholder for them)";
  say("[tune] left out of the search: " + r_.left_out);
  return {};
}

Status TuneRun::prepare() {
  space_ = buildSpace(o_);
  if (auto st = keepWhatTheCommandTakes(); !st.ok()) return st;
  if (space_.train.size() + space_.eval.size() <= 1)
    return makeError(Errc::InvalidConfig, "the search space is empty: every setting is fixed or not available on this machine "
                                          "(see the dimensions with `tune --dry-run`; --only names " + dimensionList() + ")");
  r_.out_dir = o_.out.string();
  r_.measured_at = wb::utcNowIso();
  r_.command = o_.hooks.command;
  r_.run_command = o_.user_command.text;
  r_.budget_s = o_.budget_s;
  r_.space = space_.dimensions;
  r_.objective = "the time one epoch would take: train images / steady training samples/s (after the first log interval) + "
                 "val images / evaluation images/s";
  r_.candidates.push_back({"baseline", "as given", json::object(), proto::configToJson(o_.base)});
  for (const auto& c : space_.eval) r_.candidates.push_back(c);
  for (const auto& c : space_.train) r_.candidates.push_back(c);
  r_.target_acc = o_.policy.target_acc;
  r_.batch = o_.batch;
  std::error_code ec;
  fs::create_directories(o_.out / "trials", ec);
  if (ec) return makeError(Errc::Io, o_.out.string() + ": cannot create it: " + ec.message());
  const proto::StoredRecord doc = proto::readRecordFile(o_.out / proto::kTuneFile);
  if (doc.unreadable())
    return proto::unreadableError(o_.out / proto::kTuneFile, doc.why, "its trials in " + (o_.out / "trials").string() +
                                                                     " are kept: restore it from a copy, or choose a new --out");
  if (doc.read())
    if (auto st = takeOver(proto::readTuneRecord(doc.doc)); !st.ok()) return st;
  return {};
}

void TuneRun::save() {
  r_.trials_s = trialsBefore_ + trialsHere_;
  r_.answer = tuneAnswer(r_);
  if (written_.ok()) written_ = writeTuneOutputs(o_.out, r_);
}

// What the trials so far cost, by their own records: a continued search replays the halving's
// budget decisions from the trials it reuses as the cut one made them.
double TuneRun::trialsSpent() const {
  double s = 0;
  for (const auto& t : r_.trials) s += t.run_wall_s.value_or(0);
  return s;
}

// Cut again before it reached them, the trials kept from the search before stay in tune.json for
// the next continue (they would run again otherwise).
void TuneRun::keepUnreplayed() {
  for (const auto& p : previous_) {
    const bool there = std::any_of(r_.trials.begin(), r_.trials.end(), [&](const proto::TuneTrial& t) {
      return t.candidate == p.candidate && t.stage == p.stage && t.rung == p.rung;
    });
    if (!there) r_.trials.push_back(p);
  }
}

// A config this machine refuses is the candidate's failed trial: the search goes on.
void TuneRun::launchTrial(const proto::TuneCandidate& c, const Config& config, proto::TuneTrial& t) {
  Config named = config;
  const std::string which = "trial " + c.id + " " + t.stage + std::to_string(t.rung);
  named.name += " / " + which;
  auto outcome = experiment::launchOne(named, t.run_dir, o_.user_command, o_.hooks.cli_path, which);
  if (!outcome.ok()) {
    t.status = proto::kStatusFailed;
    t.error = outcome.error().message;
    return;
  }
  t.status = outcome->status;
  if (outcome->summary.error) t.error = *outcome->summary.error;
  if (auto rec = records::loadRun(t.run_dir); rec.ok()) readTrialFigures(*rec, t);
}

std::optional<proto::TuneTrial> TuneRun::trial(const proto::TuneCandidate& c, const std::string& stage, int rung,
                                               int64_t samples, int64_t valLimit) {
  for (const auto& p : previous_)
    if (p.candidate == c.id && p.stage == stage && p.rung == rung) {
      reused_ = true;
      r_.trials.push_back(p);
      return p;
    }
  reused_ = false;
  if (stopped()) return std::nullopt;
  auto config = candidateConfig(r_, c.id);
  proto::TuneTrial t;
  t.candidate = c.id, t.stage = stage, t.rung = rung;
  if (!config.ok()) {
    t.status = proto::kStatusFailed, t.error = config.error().message;
    return t;
  }
  const Config tc = trialConfig(*config, samples, valLimit);
  t.steps = tc.train.max_steps;
  t.run_dir = trialDir(c.id + "-" + stage + std::to_string(rung)).string();
  Stopwatch w;
  launchTrial(c, tc, t);
  trialsHere_ += w.seconds();
  ++trialsRun_;
  t.epoch_s = epochEstimate(t, o_.train_images, o_.val_images);
  if (t.status == proto::kStatusCancelled && o_.hooks.stopRequested()) cancelled_ = true;
  r_.trials.push_back(t);
  save();
  return t;
}

// A full run of the config as given, estimated from its trial (each stage's first candidate has
// the config's own values: buildSpace puts them first).
double TuneRun::fullRunEstimate() const {
  const std::string given = !space_.eval.empty() ? space_.eval.front().id : space_.train.front().id;
  for (const auto& t : r_.trials)
    if (t.candidate == given && t.epoch_s) return *t.epoch_s * o_.base.train.epochs + t.run_wall_s.value_or(0) * 0.5;
  return 0;
}

double TuneRun::leftEstimate(int trialsLeft) const {
  double mean = 0;
  for (const auto& t : r_.trials) mean += t.run_wall_s.value_or(0);
  if (!r_.trials.empty()) mean /= static_cast<double>(r_.trials.size());
  const int pairs = o_.policy.fixed_pairs > 0 ? o_.policy.fixed_pairs : std::min(3, o_.policy.max_pairs);
  const double finals = fullRunEstimate() * 2 * pairs * std::max(1, o_.finalists);
  return trialsLeft * mean + std::min(finals, std::max(0.0, o_.budget_s - clock_.seconds()));
}

void TuneRun::report(const proto::TuneTrial& t, const proto::TuneCandidate& c, int trialsLeft) {
  const double left = leftEstimate(trialsLeft);
  const std::string label = candidateLabel(r_, c.id);
  std::string line = "[tune] " + c.id + " " + t.stage + std::to_string(t.rung) + " (" + label + "): ";
  if (t.epoch_s)
    line += wb::fmtRate(*t.train_samples_per_s) + " training, est. epoch " + wb::fmtSeconds(*t.epoch_s);
  else
    line += t.status + (t.error.empty() ? "" : ": " + t.error.substr(0, 160));
  if (t.contended) line += " (contended)";
  if (reused_) line += " (kept from before)";
  line += " · about " + wb::fmtSeconds(left) + " left";
  say(line);
  json ev = proto::makeEvent("trial_end", -1, clock_.seconds());
  ev["trial"] = proto::toJson(t);
  ev["label"] = label;
  ev["trials_left"] = trialsLeft;
  ev["left_s"] = left;
  emit(ev);
}

// Too small a budget, said after the first trial (what a trial costs here is known only then).
Status TuneRun::checkBudget(const proto::TuneTrial& first) const {
  if (!first.run_wall_s) return {};
  const double perTrial = *first.run_wall_s;
  const double least = perTrial * static_cast<double>(space_.eval.size() + space_.train.size()) + 2 * fullRunEstimate();
  if (least <= o_.budget_s) return {};
  return makeError(Errc::InvalidConfig, "--budget " + wb::fmtSeconds(o_.budget_s) + " is too small: one trial took " +
                                            wb::fmtSeconds(perTrial) + ", and the first round of " +
                                            std::to_string(space_.eval.size() + space_.train.size()) +
                                            " trials and one pair of the finals need about " + wb::fmtSeconds(least) +
                                            ": give at least --budget " + std::to_string(static_cast<int>(std::ceil(least * 1.5 / 60))) +
                                            "m, or search less (--only)");
}

Status TuneRun::runEvalStage() {
  if (space_.eval.empty()) return {};
  std::vector<proto::TuneTrial> done;
  const int64_t samples = rungSamples(0);
  for (size_t i = 0; i < space_.eval.size() && !stopped(); ++i) {
    auto t = trial(space_.eval[i], "eval", 0, samples, std::min(o_.val_images, kEvalStageValImages));
    if (!t) break;
    report(*t, space_.eval[i], static_cast<int>(space_.eval.size() + space_.train.size() - i - 1));
    if (i == 0 && trialsRun_ == 1)
      if (auto st = checkBudget(*t); !st.ok()) return st;
    done.push_back(*t);
  }
  if (stopped()) return {};
  const proto::TuneTrial* best = nullptr;
  for (bool quietOnly : {true, false}) {  // contended figures only when no other was measured
    for (const auto& t : done)
      if (t.eval_images_per_s && (!quietOnly || !t.contended) && (!best || *t.eval_images_per_s > *best->eval_images_per_s)) best = &t;
    if (best) break;
  }
  if (!best) return {};
  r_.eval_choice = best->candidate;
  proto::TuneRung rung;
  rung.rung = 0, rung.samples = samples;
  for (const auto& t : done) rung.candidates.push_back(t.candidate);
  rung.promoted = {best->candidate};
  rung.why = "evaluation settings: the most evaluation images/s (" + candidate(best->candidate)->label + ") join every candidate";
  r_.rungs.push_back(rung);
  save();
  return {};
}

// Successive halving over the training grid until `finalists` are left, or until the trials have
// spent half the budget (the finals need the rest): then the last rung's fastest go on.
Status TuneRun::runHalving() {
  std::vector<std::string> alive;
  for (const auto& c : space_.train) alive.push_back(c.id);
  const double band = std::max(o_.policy.floor_band, 0.0);
  for (int rung = 0; !stopped(); ++rung) {
    const int64_t samples = rungSamples(rung);
    proto::TuneRung record;
    record.rung = rung, record.samples = samples;
    std::vector<proto::TuneTrial> done;
    for (size_t i = 0; i < alive.size() && !stopped(); ++i) {
      const std::string& id = rung % 2 ? alive[alive.size() - 1 - i] : alive[i];  // order alternates between rungs
      auto t = trial(*candidate(id), "r", rung, samples, std::min(o_.val_images, kHalvingValImages));
      if (!t) break;
      report(*t, *candidate(id), static_cast<int>(alive.size() - i - 1));
      if (trialsRun_ == 1 && space_.eval.empty())
        if (auto st = checkBudget(*t); !st.ok()) return st;
      record.candidates.push_back(id);
      done.push_back(*t);
    }
    if (stopped()) return {};
    const int keep = std::max(o_.finalists, static_cast<int>(std::ceil(static_cast<double>(alive.size()) / o_.eta)));
    auto [promoted, why] = promote(done, std::min<int>(keep, static_cast<int>(alive.size())), band);
    const bool lastRung = static_cast<int>(promoted.size()) <= o_.finalists || samples >= o_.train_images ||
                          promoted.size() >= alive.size();
    const double spent = trialsSpent(), perTrial = spent / std::max<size_t>(1, r_.trials.size());
    const bool outOfBudget = !lastRung && spent + perTrial * 3 * promoted.size() > 0.5 * o_.budget_s;
    record.promoted = promoted;
    record.why = why;
    if (lastRung || outOfBudget) {
      if (static_cast<int>(promoted.size()) > o_.finalists) promoted.resize(o_.finalists);
      record.why += outOfBudget ? "; half the budget spent: the " + std::to_string(promoted.size()) + " fastest go to the finals"
                                : "; to the finals";
      record.promoted = promoted;
      r_.rungs.push_back(record);
      finalists_ = promoted;
      save();
      return {};
    }
    r_.rungs.push_back(record);
    save();
    alive = promoted;
  }
  return {};
}

// One round of finals: `ids` to the target as pairs against the config as given, in `folder`
// (finals/, finals-2/), at `target` when one is known (the first round's, for the second).
Result<experiment::Outcome> TuneRun::finalsRound(const std::vector<std::string>& ids, const std::string& folder,
                                                 std::optional<double> target, std::vector<experiment::VariantRuns>* before) {
  experiment::Plan plan;
  plan.user_command = o_.user_command;
  plan.reference = {"baseline", "the config as given", "baseline", 0, o_.base};
  int index = 1;
  for (const auto& id : ids) {
    auto c = candidateConfig(r_, id);
    if (!c.ok()) return c.error();
    if (proto::configToJson(*c) == proto::configToJson(o_.base)) continue;  // the reference itself
    plan.variants.push_back({id, candidateLabel(r_, id), id, index++, *c});
    finalsFolder_[id] = folder;
  }
  plan.steps = index;
  experiment::Policy policy = o_.policy;
  if (target) policy.target_acc = target;
  const double left = std::max(1.0, o_.budget_s - clock_.seconds());
  policy.budget_s = std::max(1.0, left / std::max<size_t>(1, plan.variants.size()));
  experiment::Hooks hooks = o_.hooks;
  const stats::Sequential seq = policy.sequential();
  hooks.on_pair = [this, &seq, before](const experiment::Outcome& o) {
    judge(withEarlier(o, before), seq);
    save();
  };
  say("[tune] " + folder + ": " + std::to_string(plan.variants.size()) + " configuration(s) to the target as pairs against the config as given");
  Stopwatch w;
  auto outcome = experiment::runPairs(plan, policy, o_.out / folder, hooks);
  r_.finals_s += w.seconds();
  if (!outcome.ok()) return outcome.error();
  if (outcome->cancelled) cancelled_ = true;
  judge(withEarlier(*outcome, before), seq);
  return outcome;
}

// judgeFinals, each finalist's runs placed in its round's folder.
void TuneRun::judge(const experiment::Outcome& o, const stats::Sequential& seq) {
  judgeFinals(o, seq, r_);
  for (auto& f : r_.finals)
    if (auto it = finalsFolder_.find(f.candidate); it != finalsFolder_.end()) f.dir = it->second + "/runs";
}

// This round's outcome with the earlier rounds' finalists before its own (one table, one judge).
experiment::Outcome TuneRun::withEarlier(const experiment::Outcome& o, const std::vector<experiment::VariantRuns>* before) {
  if (!before || before->empty()) return o;
  experiment::Outcome all = o;
  all.variants.insert(all.variants.begin(), before->begin(), before->end());
  return all;
}

// The finalists to the target as pairs against the config as given, in finals/; when all of
// them missed the target, a second round in finals-2/ (secondChance).
Status TuneRun::runFinals() {
  if (finalists_.empty()) {
    r_.note = "no candidate finished its trials: nothing to recommend";
    return {};
  }
  r_.finals_s = finalsBefore_;
  if (o_.by_parts) {
    const std::string why = byPartsBlocker();
    if (why.empty()) return runFinalsByParts();
    say("[tune] finals as pairs of whole runs: " + why);
  }
  auto first = finalsRound(finalists_, "finals", std::nullopt, nullptr);
  if (!first.ok()) return first.error();
  if (auto st = checkTargetReached(*first); !st.ok()) return st;
  const std::vector<std::string> again = first->cancelled ? std::vector<std::string>{} : secondChance(r_, o_.finalists);
  if (again.empty() || clock_.seconds() >= o_.budget_s) return {};
  say("[tune] every finalist missed the target: a second round with the fastest candidates without what they shared");
  auto second = finalsRound(again, "finals-2", first->target_acc, &first->variants);
  return second.ok() ? Status{} : Status(second.error());
}

// Why the finals cannot go by parts ("" when they can): the first finalist whose change cannot.
std::string TuneRun::byPartsBlocker() const {
  for (const auto& id : finalists_) {
    auto c = candidateConfig(r_, id);
    if (!c.ok()) return c.error().message;
    const std::string why = experiment::composedUnavailable(finalistTryOptions(o_, id, candidateLabel(r_, id), *c));
    if (!why.empty()) return id + ": " + why;
  }
  return "";
}

// Each finalist a try by parts against the config as given, in finals/<id> (a cut one continues
// from what it measured); judged after each.
Status TuneRun::runFinalsByParts() {
  say("[tune] finals: " + std::to_string(finalists_.size()) + " configuration(s) by parts against the config as given");
  Stopwatch w;
  std::vector<FinalistTry> tries;
  for (const auto& id : finalists_) {
    auto c = candidateConfig(r_, id);
    if (!c.ok()) return c.error();
    if (proto::configToJson(*c) == proto::configToJson(o_.base)) continue;  // the reference itself
    auto t = runFinalistTry(o_, finalistTryOptions(o_, id, candidateLabel(r_, id), *c), id);
    if (!t.ok() && t.error().code == Errc::Cancelled) {
      cancelled_ = true;
      break;
    }
    if (!t.ok()) return t.error();
    tries.push_back(std::move(*t));
    judgeFinalsByParts(tries, o_.policy.min_effect, r_);
    r_.finals_s = finalsBefore_ + w.seconds();
    save();
  }
  r_.finals_s = finalsBefore_ + w.seconds();
  return {};
}

// A --target-acc the config as given never reaches: said, with one it reaches.
Status TuneRun::checkTargetReached(const experiment::Outcome& outcome) const {
  if (!o_.policy.target_acc || outcome.cancelled) return {};
  double best = 0;
  bool reached = false;
  std::vector<const records::RunRecord*> refs;
  for (const auto& v : outcome.variants)
    for (const auto& rec : v.references) refs.push_back(&rec);
  for (const auto& rec : outcome.lone_reference) refs.push_back(&rec);
  for (const auto* rec : refs) {
    const auto m = compare::computeMetrics(*rec, o_.policy.target_acc);
    best = std::max(best, m.best_val_acc.value_or(0.0));
    reached = reached || m.time_to_target_s.has_value();
  }
  if (reached || best <= 0) return {};
  return makeError(Errc::InvalidConfig, "--target-acc " + wb::fmtAccuracy(*o_.policy.target_acc) +
                                            ": the config as given never reached it (its best: " + wb::fmtAccuracy(best) +
                                            "); give one it reaches, e.g. --target-acc " + wb::fmtFixed(std::floor(best * 1000) / 10 - 0.5, 1) +
                                            ", or train more epochs");
}

Result<TuneOutcome> TuneRun::run() {
  if (auto st = prepare(); !st.ok()) return st.error();
  json start = proto::makeEvent("tune", -1, 0.0);
  start["out_dir"] = o_.out.string();
  start["candidates"] = space_.eval.size() + space_.train.size();
  emit(start);
  save();
  Status st = runEvalStage();
  if (st.ok()) st = runHalving();
  if (st.ok() && !stopped()) st = runFinals();
  TuneOutcome out;
  out.cancelled = stopped();
  if (!st.ok()) {
    r_.status = proto::kStatusFailed;
    r_.note = st.error().message;
    save();
    return st.error();
  }
  r_.status = out.cancelled ? proto::kStatusCancelled : r_.best.empty() ? proto::kStatusFailed : proto::kStatusOk;
  out.failed = r_.status == proto::kStatusFailed;
  if (out.cancelled) keepUnreplayed();
  if (out.cancelled && r_.note.empty()) r_.note = "cancelled: the trials and pairs that finished are kept; `tune --out " + o_.out.string() + "` continues it";
  save();
  if (!written_.ok()) return written_.error();
  out.record = r_;
  json end = proto::makeEvent("end", -1, clock_.seconds());
  end["status"] = r_.status;
  end["out_dir"] = o_.out.string();
  end["answer"] = r_.answer;
  end["result"] = proto::toJson(r_);
  emit(end);
  return out;
}

}  // namespace

Result<TuneOutcome> runTune(const TuneOptions& options) { return TuneRun(options).run(); }

}  // namespace wb::tune
