// The finals' judgement: each finalist against the config as given (its pairs), the best of
// them, and which cannot be told from it.
#include <algorithm>
#include <cmath>

#include "tune_internal.h"
#include "wb/compare/answer.h"
#include "wb/proto/try_record.h"
#include "wb/proto/config_json.h"
#include "wb/stats/estimate_json.h"
#include "wb/stats/log_estimate.h"

namespace wb::tune {
using nlohmann::json;

namespace {

// Per counted pair: the finalist's time to target over its own pair's reference time (each pair
// carries its own host speed, so two finalists compare through their pairs run close in time).
std::vector<double> relativeTimes(const experiment::VariantRuns& v, double target) {
  std::vector<double> out;
  for (size_t i = 0; i < v.pairs.size(); ++i) {
    if (!v.counted(i)) continue;
    const auto a = compare::computeMetrics(v.references[i], target), b = compare::computeMetrics(v.variants[i], target);
    out.push_back(a.time_to_target_s && b.time_to_target_s && *a.time_to_target_s > 0 ? *b.time_to_target_s / *a.time_to_target_s
                                                                                         : std::nan(""));
  }
  return out;
}

const json& candidateSettings(const proto::TuneRecord& r, const std::string& id) {
  static const json none = json::object();
  const proto::TuneCandidate* c = findCandidate(r, id);
  return c ? c->settings : none;
}

// Whether candidate `id` runs with `path` at `value`: in its settings, or in its whole config (a
// setting that brings another: sharding its two devices).
bool carries(const proto::TuneRecord& r, const std::string& id, const std::string& path, const json& value) {
  const proto::TuneCandidate* c = findCandidate(r, id);
  if (!c) return false;
  if (c->settings.contains(path)) return c->settings[path] == value;
  return proto::valueAt(c->config, path) == value;
}

proto::TuneFinalist finalistOf(const experiment::VariantRuns& v, const experiment::PairEstimates& e) {
  proto::TuneFinalist f;
  f.candidate = v.arm.key;
  f.label = v.arm.label;
  f.dir = v.arm.slug;
  f.pairs = v.countedPairs();
  f.reached = e.reached;
  f.estimate = {{"to_target", stats::estimateJson(e.to_target)},
                {"throughput", stats::estimateJson(e.throughput)},
                {"wall", stats::estimateJson(e.wall)}};
  if (!v.failures.empty()) f.verdict = "a run failed: " + v.failures.front();
  else if (f.pairs == 0) f.verdict = "no pair counted";
  else if (!e.reached) f.verdict = "did not reach the target";
  return f;
}

// The finalist with the highest speedup among those with no verdict yet (-1: none beats the config
// as given), by `point(i)`.
template <class Point>
int bestOf(const proto::TuneRecord& r, Point point) {
  int best = -1;
  double bestPoint = 1;
  for (size_t i = 0; i < r.finals.size(); ++i)
    if (const double x = point(i); r.finals[i].verdict.empty() && std::isfinite(x) && x > bestPoint)
      best = static_cast<int>(i), bestPoint = x;
  return best;
}

// Names the best (-1: the config as given) and gives every other finalist with no verdict yet its
// verdict from `vsBest(i)`, the best's time to target against its own; into r's best, best_label,
// cannot_tell and the finalists' vs_best and verdict.
template <class VsBest>
void nameTheBest(proto::TuneRecord& r, int best, const stats::SpeedupEstimate& bestEstimate, VsBest vsBest) {
  const bool givenBest = best < 0;
  r.best = givenBest ? "baseline" : r.finals[size_t(best)].candidate;
  r.best_label = givenBest ? "the config as given" : r.finals[size_t(best)].label;
  if (!givenBest && bestEstimate.verdict != stats::Verdict::Faster) r.cannot_tell.push_back("baseline");
  for (size_t i = 0; i < r.finals.size(); ++i) {
    proto::TuneFinalist& f = r.finals[i];
    if (!f.verdict.empty()) continue;
    if (static_cast<int>(i) == best) {
      f.verdict = "best";
      continue;
    }
    const stats::SpeedupEstimate vs = vsBest(i);
    f.vs_best = stats::estimateJson(vs);
    const bool slower = vs.verdict == stats::Verdict::Faster;  // the best is clearly faster than it
    f.verdict = slower ? "slower than the best" : "cannot be told from the best";
    if (!slower) r.cannot_tell.push_back(f.candidate);
  }
}

// A speedup the other way round (b over a for a over b).
stats::SpeedupEstimate inverted(stats::SpeedupEstimate vs) {
  vs.point = 1 / vs.point;
  std::swap(vs.lo, vs.hi), vs.lo = 1 / vs.lo, vs.hi = 1 / vs.hi;
  vs.verdict = vs.verdict == stats::Verdict::Slower   ? stats::Verdict::Faster
               : vs.verdict == stats::Verdict::Faster ? stats::Verdict::Slower
                                                       : vs.verdict;
  return vs;
}

}  // namespace

void judgeFinals(const experiment::Outcome& o, const stats::Sequential& seq, proto::TuneRecord& r) {
  const std::optional<double> target = o.target_acc;
  r.target_acc = target;
  r.finals.clear();
  r.cannot_tell.clear();
  r.best.clear(), r.best_label.clear();
  if (!target) {
    r.note = "no target accuracy yet (the config as given has no finished run)";
    return;
  }
  std::vector<experiment::PairEstimates> est;
  for (const auto& v : o.variants) {
    est.push_back(experiment::estimatePairs(v, target, seq));
    r.finals.push_back(finalistOf(v, est.back()));
  }
  const int best = bestOf(r, [&](size_t i) { return est[i].to_target.point; });
  const bool givenBest = best < 0;
  nameTheBest(r, best, givenBest ? stats::SpeedupEstimate{} : est[size_t(best)].to_target, [&](size_t i) {
    if (givenBest) return inverted(est[i].to_target);  // against the config as given: its own pairs, the other way round
    return stats::pairedSpeedup(relativeTimes(o.variants[i], *target), relativeTimes(o.variants[size_t(best)], *target),
                                 seq.at(r.finals[i].pairs));
  });
  r.note = givenBest ? "no finalist reached the target clearly sooner than the config as given: keep it"
                     : compare::figureWithReading(est[size_t(best)].to_target) + " to the target against the config as given";
}

namespace {

proto::TuneFinalist finalistByParts(const FinalistTry& t) {
  proto::TuneFinalist f;
  f.candidate = t.id, f.label = t.label, f.dir = t.dir, f.method = "composed";
  if (!t.error.empty() || !t.doc.is_object()) {
    f.verdict = "a measurement failed: " + t.error;
    return f;
  }
  const proto::TryRecord record = proto::tryRecordFromJson(t.doc);
  f.estimate = {{"to_target", record.estimate.value("to_target", json())}, {"throughput", record.estimate.value("throughput", json())}};
  f.words = record.words;
  f.reached = record.reached;
  if (record.verdictWord() == "contended")
    f.verdict = "contended: no verdict (another process used the CPU while it was measured)";
  else if (!f.reached)
    f.verdict = "did not reach the target";
  return f;
}

// ln of a composed estimate with its standard error and degrees of freedom (try.json's composed).
stats::LogEstimate composedLog(const FinalistTry& t) {
  const proto::TryRecord record = proto::tryRecordFromJson(t.doc);
  const json c = record.composed.is_object() ? record.composed : json::object();
  stats::LogEstimate e;
  e.value = stats::estimateFromJson(record.estimate.value("to_target", json())).point;
  e.log_se = c.value("log_se", json()).is_number() ? c["log_se"].get<double>() : NAN;
  e.df = c.value("df", json()).is_number() ? c["df"].get<double>() : 0;
  return e;
}

// The best against another finalist: best / other, its interval from the two standard errors.
stats::SpeedupEstimate bestAgainst(const stats::LogEstimate& best, const stats::LogEstimate& other, double minEffect) {
  stats::LogEstimate ratio;
  ratio.value = best.value / other.value;
  ratio.log_se = std::hypot(best.log_se, other.log_se);
  ratio.df = std::min(best.df, other.df);
  stats::SpeedupEstimate s;
  s.point = ratio.value;
  s.min_effect = minEffect;
  const stats::Interval iv = stats::intervalOf(ratio, s.level);
  s.lo = iv.lo, s.hi = iv.hi;
  s.verdict = stats::verdictOf(s.point, s.lo, s.hi, minEffect);
  s.method = "ratio of two composed times to target, their log standard errors added";
  return s;
}

}  // namespace

void judgeFinalsByParts(const std::vector<FinalistTry>& tries, double minEffect, proto::TuneRecord& r) {
  r.finals.clear(), r.cannot_tell.clear(), r.best.clear(), r.best_label.clear();
  for (const auto& t : tries) {
    r.finals.push_back(finalistByParts(t));
    if (const double acc = proto::tryRecordFromJson(t.doc).target_acc; std::isfinite(acc)) r.target_acc = acc;
  }
  const auto toTarget = [&](size_t i) { return stats::estimateFromJson(r.finals[i].estimate.value("to_target", json())); };
  const int best = bestOf(r, [&](size_t i) { return toTarget(i).point; });
  const bool givenBest = best < 0;
  const stats::SpeedupEstimate bestEst = givenBest ? stats::SpeedupEstimate{} : toTarget(size_t(best));
  nameTheBest(r, best, bestEst, [&](size_t i) {
    return bestAgainst(givenBest ? stats::exactly(1) : composedLog(tries[size_t(best)]), composedLog(tries[i]), minEffect);
  });
  r.note = givenBest ? "no finalist reached the target clearly sooner than the config as given: keep it"
                     : compare::figureWithReading(bestEst) + " to the target against the config as given, by parts";
}

// When every finalist missed the target, the fastest other candidates of the first round of
// trials that do not carry everything the missing ones had in common (more devices' larger
// global batch, say): a setting that trains worse in these epochs must not hide the ones that
// pay. Empty when the missing finalists share nothing, or none is left.
std::vector<std::string> secondChance(const proto::TuneRecord& r, int finalists) {
  json common;
  for (const auto& f : r.finals) {
    if (f.verdict != "did not reach the target") return {};
    const json& settings = candidateSettings(r, f.candidate);
    if (common.is_null()) common = settings;
    for (auto it = common.begin(); it != common.end();)
      it = settings.contains(it.key()) && settings[it.key()] == it.value() ? std::next(it) : common.erase(it);
  }
  if (common.is_null() || common.empty()) return {};
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& t : r.trials) {
    if (t.stage != "r" || t.rung != 0 || !t.epoch_s || t.contended || t.status != proto::kStatusOk) continue;
    const json& settings = candidateSettings(r, t.candidate);
    bool carriesAll = true;
    for (auto it = common.begin(); it != common.end(); ++it) carriesAll = carriesAll && carries(r, t.candidate, it.key(), it.value());
    const bool tried = std::any_of(r.finals.begin(), r.finals.end(), [&](const proto::TuneFinalist& f) { return f.candidate == t.candidate; });
    if (!carriesAll && !tried && !settings.empty()) ranked.push_back({*t.epoch_s, t.candidate});
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> ids;
  for (const auto& [epoch, id] : ranked)
    if (static_cast<int>(ids.size()) < finalists) ids.push_back(id);
  return ids;
}

}  // namespace wb::tune
