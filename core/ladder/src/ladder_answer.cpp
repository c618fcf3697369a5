// The ladder's answer (ladderAnswer) and its short table, from the ladder's record alone.
#include <algorithm>
#include <cmath>
#include <map>

#include "wb/common/speedups.h"
#include "wb/compare/answer.h"
#include "wb/ladder/ladder.h"
#include "wb/proto/config_json.h"
#include "wb/proto/run_status.h"

namespace wb::ladder {
using compare::Reading;
using stats::SpeedupEstimate;

namespace {

const LadderRow* baselineRow(const Ladder& l) {
  for (const auto& row : l.rows)
    if (row.step.key == "baseline") return &row;
  return nullptr;
}

bool tried(const LadderRow& row) {
  return row.step.key != "baseline" && row.step.key != kKeptStep && !row.step.isolated && !row.step.skipped &&
         !(row.not_run && row.repeats == 0);
}

bool keptStep(const LadderRow& row) { return row.decision.rfind("kept", 0) == 0; }

// The estimate a row's decision rests on: to the target, or the wall time without one.
const SpeedupEstimate& headlineOf(const Ladder& l, const LadderRow& row) {
  return l.target_acc ? row.estimates.to_target : row.estimates.wall;
}

// The words of the speedups `keys` from the baseline's config to `config`.
compare::ChangeWords wordsOf(const Ladder& l, const Config& config, const std::vector<std::string>& keys) {
  const LadderRow* base = baselineRow(l);
  const Config from = base ? base->step.config : ladderBaseline(config);
  compare::ChangeWords w = compare::speedupChangeWords(compare::configDiff(proto::configToJson(from), proto::configToJson(config)), keys);
  if (w.empty() && !keys.empty()) {  // nothing of its own differs (a step on top of an equal value)
    const Speedup* s = findSpeedup(keys.front());
    const std::string name = s ? compare::lowered(s->label) : keys.front();
    return {"take " + name, "taking " + name, name};
  }
  return w;
}

std::string stepName(const Ladder& l, const LadderRow& row) { return wordsOf(l, row.step.config, {row.step.key}).name; }

// Why a tried step did not pay, as the group it falls in ("cannot be faster here", ...), with the
// figure that goes with the group when it has one.
enum class Why { CannotBeFaster, Same, Slower, Unclear, TooNoisy, NotReached, Failed, Contended, Faster };

Why whyOf(const Ladder& l, const LadderRow& row) {
  if (row.decision.rfind("dropped: a run failed", 0) == 0 || (row.repeats == 0 && !row.problems.empty())) return Why::Failed;
  if (!row.contention.empty() || row.decision.rfind("not measured", 0) == 0) return Why::Contended;
  if (l.target_acc && !row.target_s && row.repeats > 0 && row.settled != "by parts") return Why::NotReached;
  switch (compare::readingOf(headlineOf(l, row))) {
    case Reading::Faster: return Why::Faster;
    case Reading::Slower: return Why::Slower;
    case Reading::Same: return Why::Same;
    case Reading::CannotBeFaster: return Why::CannotBeFaster;
    case Reading::TooNoisy: return Why::TooNoisy;
    case Reading::None: return l.target_acc ? Why::NotReached : Why::Unclear;
    default: return Why::Unclear;
  }
}

std::string groupWords(Why why, const std::vector<const LadderRow*>& rows, const Ladder& l) {
  const bool one = rows.size() == 1;
  double most = 0, least = 1e300;
  for (const LadderRow* r : rows) {
    const SpeedupEstimate& e = headlineOf(l, *r);
    if (std::isfinite(e.hi)) most = std::max(most, e.hi);
    if (std::isfinite(e.point)) least = std::min(least, e.point);
  }
  const double m = l.verdicts.min_effect > 0 ? l.verdicts.min_effect : stats::kDefaultMinEffect;
  switch (why) {
    case Why::CannotBeFaster: return "cannot be faster here (at most " + fmtSpeedup(most) + ")";
    case Why::Same: return std::string(one ? "differs" : "differ") + " by less than " + fmtFixed(m * 100, 0) + " %";
    case Why::Slower: return std::string(one ? "is" : "are") + " slower (" + (one ? "" : "down to ") + fmtSpeedup(least) + ")";
    case Why::Unclear: return std::string(one ? "shows" : "show") + " no clear gain yet";
    case Why::TooNoisy: return std::string(one ? "was" : "were") + " too noisy to say";
    case Why::NotReached: return "did not reach " + compare::targetWords(l.target_acc);
    case Why::Failed: return "failed";
    case Why::Contended: return "could not be measured (another process used the CPU)";
    case Why::Faster: return std::string(one ? "is" : "are") + " faster, but not kept";
  }
  return "";
}

// "two devices and bf16-mixed cannot be faster here (at most 0.97×); loader workers and
// inference-mode eval differ by less than 2 %".
std::string nothingPaid(const Ladder& l) {
  std::map<Why, std::vector<const LadderRow*>> groups;
  for (const auto& row : l.rows)
    if (tried(row)) groups[whyOf(l, row)].push_back(&row);
  if (groups.empty()) return "Nothing was tried: every step was skipped on this machine (the table says why).";
  std::vector<std::string> parts;
  for (const auto& [why, rows] : groups) {
    std::vector<std::string> names;
    for (const LadderRow* r : rows) names.push_back(stepName(l, *r));
    parts.push_back(compare::listWords(names) + " " + groupWords(why, rows, l));
  }
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : "; ") + p;
  return "Nothing tried here made training faster: " + s + ".";
}

// Whether every speedup named keeps the training's math (their descriptors say).
bool allKeepTheMath(const std::vector<std::string>& keys) {
  return std::all_of(keys.begin(), keys.end(), [](const std::string& k) {
    const Speedup* s = findSpeedup(k);
    return s && s->math.math == Math::Keeps;
  });
}

// The configuration `row` runs (the kept one, or a cumulative step) against the baseline.
std::string againstBaseline(const Ladder& l, const LadderRow& row, const std::vector<std::string>& keys) {
  const compare::ChangeWords w = wordsOf(l, row.step.config, keys);
  const SpeedupEstimate& e = headlineOf(l, row);
  const std::string to = l.target_acc ? "to " + compare::targetWords(l.target_acc) : std::string("in wall time");
  const bool one = keys.size() == 1, keeps = allKeepTheMath(keys);
  const std::string why = keeps ? (one ? "it keeps the training's math, so this is its throughput"
                                       : "each keeps the training's math, so this is their throughput")
                                : std::string("measured ") + to + " against the baseline, every speedup off";
  const std::string figure = compare::figureWords(e);
  switch (compare::readingOf(e)) {
    case Reading::Faster:
      return compare::capitalised(w.todo) + ": " + fmtSpeedup(e.point) + " faster " + to + " (" + figure.substr(figure.find('(') + 1) +
             "; " + why + ".";
    case Reading::Slower:
    case Reading::Same:
    case Reading::CannotBeFaster:
      return "Keep the baseline: " + w.name + (one ? " was" : " were") + " kept step by step, but against the baseline " +
             (one ? "it measures " : "they measure ") + figure + " " + to + ".";
    case Reading::TooNoisy:
      return "Too noisy to say whether " + w.name + " is faster " + to + " than the baseline; what would settle it: " +
             (compare::morePairsWords(e).empty() ? std::string("more pairs") : compare::morePairsWords(e)) + " (--max-pairs), or a quiet machine.";
    default:
      return "Not enough evidence yet: " + w.name + " against the baseline measured " + figure + " " + to +
             "; what would settle it: " + (compare::morePairsWords(e).empty() ? std::string("more pairs") : compare::morePairsWords(e)) +
             " (--max-pairs), or a quiet machine.";
  }
}

// A cumulative ladder's answer: the fastest step that is clearly faster than the baseline.
std::string cumulativeAnswer(const Ladder& l) {
  const LadderRow* best = nullptr;
  std::vector<std::string> keys, bestKeys;
  for (const auto& row : l.rows) {
    if (!tried(row)) continue;
    keys.push_back(row.step.key);
    const SpeedupEstimate& e = headlineOf(l, row);
    if (whyOf(l, row) == Why::Faster && (!best || e.point > headlineOf(l, *best).point)) best = &row, bestKeys = keys;
  }
  return best ? againstBaseline(l, *best, bestKeys) : nothingPaid(l);
}

}  // namespace

std::string ladderAnswer(const Ladder& l) {
  if (l.status == proto::kStatusCancelled) {
    std::string at = l.cancelled_at;  // the step by its speedup's words, where the ladder has its row
    for (const auto& row : l.rows)
      if (row.step.key == l.cancelled_at && row.step.key != "baseline" && row.step.key != kKeptStep) at = stepName(l, row);
    return "No answer yet: the ladder was cancelled" + (at.empty() ? std::string() : " at step " + at) +
           "; the same command on the same folder continues it, keeping the pairs that finished.";
  }
  if (l.status == "running") {
    std::vector<std::string> kept;
    for (const auto& row : l.rows)
      if (tried(row) && keptStep(row)) kept.push_back(stepName(l, row));
    return "Still measuring" + (kept.empty() ? std::string(": nothing kept so far.") : ": kept so far " + compare::listWords(kept) + ".");
  }
  if (!l.greedy) return cumulativeAnswer(l);
  const LadderRow* kept = keptRow(l);
  std::vector<std::string> keys;
  for (const auto& row : l.rows)
    if (tried(row) && keptStep(row)) keys.push_back(row.step.key);
  if (!kept || kept->step.skipped || keys.empty() || kept->repeats == 0) return nothingPaid(l);
  return againstBaseline(l, *kept, keys);
}

render::Table ladderAnswerTable(const Ladder& l) {
  render::Table t = compare::answerTable("", "What changed");
  t.columns.insert(t.columns.begin(), {"step", "Step", ""});
  t.columns.back().title = l.target_acc ? "× to " + compare::targetWords(l.target_acc) + " (interval)" : "× wall time (interval)";
  std::vector<std::string> keptNames;
  for (const auto& row : l.rows)
    if (tried(row) && keptStep(row)) keptNames.push_back(stepName(l, row));
  int index = 0;
  for (const auto& row : l.rows) {
    const std::string step = row.step.isolated ? "alone" : row.step.key == kKeptStep ? "kept" : std::to_string(index++);
    if (row.step.key == "baseline") continue;
    std::string what = row.step.key == kKeptStep ? (keptNames.empty() ? std::string("nothing kept")
                                                                                   : compare::listWords(keptNames) + ", against the baseline")
                                                 : stepName(l, row);
    std::string decision;
    SpeedupEstimate e = headlineOf(l, row);
    if (row.step.skipped) decision = row.step.key == kKeptStep ? "nothing kept" : "skipped here", e = {};
    else if (row.not_run && row.repeats == 0) decision = "not run (cancelled)";
    else if (whyOf(l, row) == Why::Contended) decision = "not measured: contended", e = {};
    else if (whyOf(l, row) == Why::Failed) decision = "failed";
    else if (whyOf(l, row) == Why::NotReached) decision = "not reached", e = {};
    else decision = compare::readingWords(compare::readingOf(e), l.verdicts.min_effect);
    if (l.greedy && row.step.key != kKeptStep && (keptStep(row) || row.decision.rfind("dropped", 0) == 0))
      decision = (keptStep(row) ? "kept: " : "dropped: ") + decision;
    compare::addAnswerRow(t, what, decision, e);
    t.rows.back().insert(t.rows.back().begin(), render::Cell::str(step));
  }
  return t;
}

}  // namespace wb::ladder
