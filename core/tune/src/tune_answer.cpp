// The search's answer (tuneAnswer) and its short table, from tune.json's record alone.
#include <cmath>

#include "wb/compare/answer.h"
#include "wb/proto/run_status.h"
#include "wb/stats/estimate_json.h"
#include "wb/tune/tune.h"

namespace wb::tune {
using compare::Reading;
using nlohmann::json;
using stats::SpeedupEstimate;

namespace {

SpeedupEstimate toTarget(const proto::TuneFinalist& f) { return stats::estimateFromJson(f.estimate.value("to_target", json())); }

const proto::TuneFinalist* finalistOf(const proto::TuneRecord& r, const std::string& id) {
  for (const auto& f : r.finals)
    if (f.candidate == id) return &f;
  return nullptr;
}

std::string labelsOf(const proto::TuneRecord& r, const std::vector<std::string>& ids) {
  std::vector<std::string> labels;
  for (const auto& id : ids) labels.push_back(id == "baseline" ? std::string("the config as given") : candidateLabel(r, id));
  return compare::listWords(labels);
}

// Every finalist's figure against the config as given: "workers 2 0.98× (95 %: 0.91-1.05×)".
std::string finalistFigures(const proto::TuneRecord& r) {
  std::vector<std::string> figures;
  for (const auto& f : r.finals)
    figures.push_back(f.label + " " + (f.verdict.empty() || f.verdict == "best" || f.verdict.rfind("cannot", 0) == 0 ||
                                               f.verdict.rfind("slower", 0) == 0
                                           ? compare::figureWords(toTarget(f))
                                           : f.verdict));
  return compare::listWords(figures);
}

std::string bestAnswer(const proto::TuneRecord& r, const proto::TuneFinalist& best) {
  const SpeedupEstimate e = toTarget(best);
  const std::string to = "to " + compare::targetWords(r.target_acc), figure = compare::figureWords(e);
  const std::string n = std::to_string(r.finals.size());
  std::vector<std::string> others;
  for (const auto& id : r.cannot_tell)
    if (id != "baseline") others.push_back(id);
  const std::string tie = others.empty() ? "" : "; " + labelsOf(r, others) + (others.size() == 1 ? " is" : " are") +
                                                    " as fast within the noise";
  if (compare::readingOf(e) == Reading::Faster)
    return "Use " + best.label + ": " + fmtSpeedup(e.point) + " faster " + to + " than the config as given (" +
           figure.substr(figure.find('(') + 1) + "; the fastest of " + n + " finalist" + (r.finals.size() == 1 ? "" : "s") +
           " measured to the target" + tie + ".";
  const std::string settle = "more runs to the target for the finals (--variant-runs, --reference-runs), or a quiet machine.";
  if (compare::readingOf(e) == Reading::TooNoisy)
    return "Too noisy to say whether the fastest finalist, " + best.label + ", is faster " + to +
           " than the config as given; what would settle it: " + settle;
  return "Not enough evidence yet: the fastest finalist, " + best.label + ", measured " + figure + " " + to +
         " against the config as given, not clearly faster; what would settle it: " + settle;
}

}  // namespace

std::string tuneAnswer(const proto::TuneRecord& r) {
  if (r.status == proto::kStatusCancelled)
    return "No answer yet: the search was cancelled; the same command on the same folder continues it, keeping the trials and "
           "pairs that finished.";
  if (r.status == "running")
    return "Still searching: " + std::to_string(r.trials.size()) + " trial" + (r.trials.size() == 1 ? "" : "s") + " and " +
           std::to_string(r.finals.size()) + " finalist" + (r.finals.size() == 1 ? "" : "s") + " measured so far.";
  if (r.best.empty()) return "No answer: " + (r.note.empty() ? std::string("the search found no configuration to recommend") : compare::oneLine(r.note)) + ".";
  if (r.best == "baseline")
    return "Keep the config as given: no finalist reached " + compare::targetWords(r.target_acc) + " clearly sooner" +
           (r.finals.empty() ? std::string(".") : " (" + finalistFigures(r) + ").");
  const proto::TuneFinalist* best = finalistOf(r, r.best);
  if (!best) return "Use " + r.best_label + ": the search's pick.";
  return bestAnswer(r, *best);
}

render::Table tuneAnswerTable(const proto::TuneRecord& r) {
  render::Table t = compare::answerTable("", "Finalist (settings)");
  t.columns.back().title = "× to " + compare::targetWords(r.target_acc) + " (interval)";
  for (const auto& f : r.finals) {
    const SpeedupEstimate e = toTarget(f);
    const std::string decision = f.verdict == "best" ? "best" : !f.verdict.empty() ? f.verdict
                                                               : compare::readingWords(compare::readingOf(e), e.min_effect);
    compare::addAnswerRow(t, f.label, decision, e);
  }
  return t;
}

}  // namespace wb::tune
