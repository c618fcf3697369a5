// A try's answer (wb/experiment/try.h tryAnswer) and its short table: from try.json's record alone.
#include <cmath>

#include "wb/compare/answer.h"
#include "wb/experiment/try.h"
#include "wb/proto/config_json.h"
#include "wb/proto/run_status.h"
#include "wb/stats/estimate_json.h"
#include "wb/stats/time_to_target_json.h"

namespace wb::experiment {
using compare::Reading;
using nlohmann::json;
using stats::SpeedupEstimate;

namespace {

// What the variant changes: the configs' difference by the schema's labels, else the caller's words.
compare::ChangeWords changeOf(const proto::TryRecord& r) {
  compare::ChangeWords w = compare::changeWords(
      compare::configDiff(proto::configToJson(r.baseline.config), proto::configToJson(r.variant.config)));
  if (!w.empty()) return w;
  if (r.variant_command) return {"run `" + *r.variant_command + "` instead", "running `" + *r.variant_command + "` instead", "the variant's command"};
  const std::string what = r.setting.empty() ? std::string("the change") : r.setting;
  return {"take " + what, "taking " + what, what};
}

std::optional<double> targetOf(const proto::TryRecord& r) {
  return std::isfinite(r.target_acc) ? std::optional<double>(r.target_acc) : std::nullopt;
}

// The estimate the answer rests on: to the target (by parts, or pairs that reached it), else the
// wall time of whole runs without a target.
SpeedupEstimate headlineOf(const proto::TryRecord& r, std::string* to) {
  const json& est = r.estimate;
  if (r.byParts() || targetOf(r)) {
    *to = "to " + compare::targetWords(targetOf(r));
    return stats::estimateFromJson(est.value("to_target", json()));
  }
  *to = "in wall time";
  return stats::estimateFromJson(est.value("wall", json()));
}

bool contended(const proto::TryRecord& r) {
  return r.verdictWord() == "contended" || (!r.byParts() && r.pairs == 0 && !r.runs.empty());
}

// Why the figure is what it is: the math kept (the speed is all), or the split of a change of the
// math, or the pairs of whole runs it rests on.
std::string whyOf(const proto::TryRecord& r, const SpeedupEstimate& e) {
  if (r.byParts()) {
    const bool kept = r.math.is_object() && r.math.value("keeps_math", false);
    if (kept)
      return r.evaluation.is_object() ? "it keeps the training's math, so this is its throughput and evaluation time"
                                      : "it keeps the training's math, so this is its throughput";
    const stats::TimeToTargetEstimate t = stats::timeToTargetFromJson(r.composed);
    if (!std::isfinite(t.throughput_factor)) return "measured by parts";
    std::string split = "it changes the training's math: " + fmtSpeedup(t.throughput_factor) + " the throughput";
    if (std::isfinite(t.samples_factor))
      split += ", " + fmtSpeedup(t.samples_factor) + (t.bound == stats::SamplesBound::Exact ? "" : " at most") + " on samples to target";
    return split;
  }
  const int n = e.pairs > 0 ? e.pairs : r.pairs;
  return "measured on " + std::to_string(n) + " pair" + (n == 1 ? "" : "s") + " of whole runs, in alternating order";
}

// What would settle an estimate that is not a verdict yet.
std::string settleOf(const proto::TryRecord& r, const SpeedupEstimate& e) {
  if (!r.byParts()) {
    const std::string more = compare::morePairsWords(e);
    return (more.empty() ? "more pairs" : more) + " (--max-pairs), or a quiet machine";
  }
  const bool kept = r.math.is_object() && r.math.value("keeps_math", false);
  return kept ? "a quiet machine (the segments' rounds carry this noise)"
              : "more runs to the target (--variant-runs, --reference-runs), or a quiet machine";
}

std::string aaAnswer(const SpeedupEstimate& e, const std::string& to) {
  switch (compare::readingOf(e)) {
    case Reading::Faster:
    case Reading::Slower:
      return "A/A check failed: the baseline's config against itself measured " + compare::figureWords(e) + " " + to +
             ", a difference that is this machine's noise; measure on a quieter machine.";
    case Reading::Same:
    case Reading::Unclear:
      return "A/A check passed: the baseline's config against itself measured " + compare::figureWords(e) + " " + to +
             ", no verdict, as it should.";
    default:
      return "A/A check: the baseline's config against itself is " + compare::figureWords(e) + " " + to +
             "; more pairs would say how noisy this machine is.";
  }
}

std::string verdictAnswer(const proto::TryRecord& r, const compare::ChangeWords& w, const SpeedupEstimate& e, const std::string& to) {
  const std::string figure = compare::figureWords(e), why = whyOf(r, e);
  const double m = e.min_effect > 0 ? e.min_effect : stats::kDefaultMinEffect;
  switch (compare::readingOf(e)) {
    case Reading::Faster:
      return compare::capitalised(w.todo) + ": " + fmtSpeedup(e.point) + " faster " + to + " (" + figure.substr(figure.find('(') + 1) + "; " + why + ".";
    case Reading::Slower:
      return "Keep the baseline: " + w.doing + " is slower, " + figure + " " + to + "; " + why + ".";
    case Reading::Same:
      return "No gain worth taking: " + w.doing + " changes the time " + to + " by less than " + fmtFixed(m * 100, 0) + " % (" +
             figure.substr(figure.find('(') + 1) + "; " + why + ".";
    case Reading::CannotBeFaster:
      return "Keep the baseline: " + w.doing + " cannot be faster here (" + figure + " " + to + "); " + why + ".";
    case Reading::TooNoisy:
      return "Too noisy to say whether " + w.doing + " is faster " + to +
             ": its interval is wider than any effect it could detect; what would settle it: " + settleOf(r, e) + ".";
    case Reading::None: return "No answer: the measurements gave no time " + to + ".";
    default:
      return "Not enough evidence yet: " + w.doing + " measured " + figure + " " + to + ", neither clearly faster nor slower; what would settle it: " +
             settleOf(r, e) + ".";
  }
}

}  // namespace

std::string tryAnswer(const proto::TryRecord& r) {
  if (r.status == proto::kStatusCancelled)
    return "No answer yet: the try was cancelled; the same command on the same folder continues it from what was measured.";
  if (r.status == proto::kStatusFailed)
    return "No answer: the try failed" + (r.error.empty() ? std::string(" (its runs' logs say why)") : ": " + compare::oneLine(r.error)) + ".";
  if (r.status == "running")
    return "Still measuring: " + std::to_string(r.pairs) + " counted pair" + (r.pairs == 1 ? "" : "s") + " so far.";
  std::string to;
  const SpeedupEstimate e = headlineOf(r, &to);
  if (contended(r))
    return "No answer: another process used the CPU while it was measured, so no speedup is taken from it; run it again on a "
           "quiet machine.";
  if (r.same_config) return aaAnswer(e, to);
  const compare::ChangeWords w = changeOf(r);
  if (!r.byParts() && targetOf(r) && !r.reached && r.pairs > 0)
    return "Keep the baseline: " + w.doing + " did not reach " + compare::targetWords(targetOf(r)) + " in its runs.";
  return verdictAnswer(r, w, e, to);
}

render::Table tryAnswerTable(const proto::TryRecord& r) {
  render::Table t = compare::answerTable("", "What changed");
  std::string to;
  const SpeedupEstimate e = headlineOf(r, &to);
  const compare::ChangeWords w = changeOf(r);
  const std::string what = r.same_config ? std::string("nothing (an A/A check)") : w.name;
  const std::string decision = contended(r)                                    ? "no verdict: contended"
                               : !r.byParts() && targetOf(r) && !r.reached && r.pairs > 0 ? "not reached"
                               : r.status != proto::kStatusOk                  ? r.status
                                                                              : compare::readingWords(compare::readingOf(e), e.min_effect);
  compare::addAnswerRow(t, what, decision, contended(r) ? SpeedupEstimate{} : e);
  t.columns[2].title = "× " + to + " (interval)";
  if (r.byParts()) {  // the parts behind a composed figure, one row each
    const SpeedupEstimate speed = stats::estimateFromJson(r.estimate.value("throughput", json()));
    compare::addAnswerRow(t, "  its throughput", compare::readingWords(compare::readingOf(speed), speed.min_effect), speed);
  }
  return t;
}

}  // namespace wb::experiment
