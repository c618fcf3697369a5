// The answer's shared words (wb/compare/answer.h) and `compare`'s own answer.
#include "wb/compare/answer.h"

#include <algorithm>
#include <map>
#include <cctype>
#include <cmath>

#include "wb/common/config_schema.h"
#include "wb/common/speedups.h"

namespace wb::compare {
using nlohmann::json;
using stats::SpeedupEstimate;
using stats::Verdict;

namespace {

double minEffectOf(const SpeedupEstimate& e) { return e.min_effect > 0 ? e.min_effect : stats::kDefaultMinEffect; }

std::string percent(double share) {
  const double p = share * 100;
  return fmtFixed(p, std::fabs(p - std::round(p)) < 0.05 ? 0 : 1) + " %";
}

std::string intervalWords(const SpeedupEstimate& e) {
  return levelWords(e.level) + ": " + fmtEdge(e.lo) + "-" + fmtEdge(e.hi) + "×";
}


// A field's label for people: the schema's; a field inside a speedup's group carries the
// speedup's name ("early stopping patience", "early stopping min delta").
std::string fieldLabel(const std::string& path) {
  const FieldSpec* spec = findFieldSpec(path);
  std::string label = spec ? lowered(spec->label) : path.substr(path.rfind('.') + 1);
  const Speedup* s = speedupOfField(path);
  if (!s || path == std::string("speedups.") + s->key) return label;
  const std::string group = lowered(s->label);
  if (label == group) {
    std::string last = path.substr(path.rfind('.') + 1);
    std::replace(last.begin(), last.end(), '_', ' ');
    return group + " " + last;
  }
  return label.rfind(group, 0) == 0 ? label : group + " " + label;
}

// A compact JSON value as a person reads it: strings without their quotes.
json valueOf(const std::string& compact) { return json::parse(compact, nullptr, false); }
std::string valueText(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

struct OneChange {
  std::string todo, doing, name;
};

OneChange oneChange(const ConfigChange& c) {
  const std::string label = fieldLabel(c.path);
  const json after = valueOf(c.after);
  if (after.is_boolean()) {
    const bool on = after.get<bool>();
    return {std::string(on ? "turn on " : "turn off ") + label, std::string(on ? "turning on " : "turning off ") + label,
            on ? label : label + " off"};
  }
  const std::string v = after.is_discarded() ? c.after : valueText(after);
  return {"set " + label + " to " + v, "setting " + label + " to " + v, label + " " + v};
}

bool ignored(const ConfigChange& c) {
  return std::find(kRepeatIgnoredFields.begin(), kRepeatIgnoredFields.end(), c.path) != kRepeatIgnoredFields.end();
}

ChangeWords wordsOf(const std::vector<OneChange>& changes) {
  if (changes.empty()) return {};
  std::vector<std::string> todo, doing, names;
  for (const auto& c : changes) todo.push_back(c.todo), doing.push_back(c.doing), names.push_back(c.name);
  if (changes.size() > 4) {
    const std::string some = names[0] + ", " + names[1] + ", " + names[2] + " and " + std::to_string(names.size() - 3) + " more";
    return {"apply its " + std::to_string(changes.size()) + " changes (" + some + ")",
            "applying its " + std::to_string(changes.size()) + " changes (" + some + ")", some};
  }
  // One verb for a run of changes of one kind: "turn on channels-last and pin memory".
  return {listWords(todo), listWords(doing), listWords(names)};
}

}  // namespace

Reading readingOf(const SpeedupEstimate& e) {
  if (!std::isfinite(e.point)) return Reading::None;
  if (!e.hasInterval()) return Reading::NoVerdict;
  const double m = minEffectOf(e);
  // Wider than any effect it could detect (0 to 6×): no figure to read, however it was made.
  const bool tooWide = !(e.lo > 0) || std::sqrt(e.hi / e.lo) - 1 >= kTooNoisyHalfWidth;
  if (e.verdict == Verdict::NoInterval)  // an interval without a verdict: a bound
    return !(e.lo > 0) && e.hi < 1 + m ? Reading::CannotBeFaster : tooWide ? Reading::TooNoisy : Reading::NoVerdict;
  if (e.verdict == Verdict::Faster) return Reading::Faster;
  if (e.verdict == Verdict::Slower) return Reading::Slower;
  if (tooWide) return Reading::TooNoisy;
  if (e.lo >= 1 / (1 + m) && e.hi <= 1 + m) return Reading::Same;
  return Reading::Unclear;
}

std::string levelWords(double level) {
  if (!(level > 0 && level < 1)) level = 0.95;
  return percent(level);
}

std::string figureWords(const SpeedupEstimate& e) {
  switch (readingOf(e)) {
    case Reading::None: return "–";
    case Reading::TooNoisy: return "too noisy to say";
    case Reading::CannotBeFaster: return "at most " + fmtSpeedup(e.hi);
    case Reading::NoVerdict:
      if (!e.hasInterval()) return fmtSpeedup(e.point) + " (one run each: not a verdict)";
      return fmtSpeedup(e.point) + " (a bound, " + fmtEdge(e.lo) + "-" + fmtEdge(e.hi) + "×: not a verdict)";
    default: break;
  }
  // A verdict on a one-sided bound (runs cut before the target: the variant at most so fast).
  if (!(e.lo > 0)) return "at most " + fmtSpeedup(e.hi) + " (" + levelWords(e.level) + ")";
  if (!std::isfinite(e.hi)) return "at least " + fmtSpeedup(e.lo) + " (" + levelWords(e.level) + ")";
  return fmtSpeedup(e.point) + " (" + intervalWords(e) + ")";
}

std::string figureWithReading(const SpeedupEstimate& e) {
  const Reading r = readingOf(e);
  const std::string figure = figureWords(e);
  const bool bound = !(e.lo > 0) || !std::isfinite(e.hi);  // "at most 0.96× (96 %)": the decision says slower
  const bool saysItself =
      bound || r == Reading::TooNoisy || r == Reading::CannotBeFaster || r == Reading::NoVerdict || r == Reading::None;
  if (saysItself) return figure;
  const bool verdict = r == Reading::Faster || r == Reading::Slower;
  const size_t at = figure.find(" (");  // after the figure, before its interval
  return figure.substr(0, at) + (verdict ? " " : ", ") + readingWords(r, e.min_effect) +
         (at == std::string::npos ? "" : figure.substr(at));
}

std::string readingWords(Reading r, double minEffect) {
  switch (r) {
    case Reading::Faster: return "faster";
    case Reading::Slower: return "slower";
    case Reading::Same: return "< " + percent(minEffect > 0 ? minEffect : stats::kDefaultMinEffect) + " either way";
    case Reading::Unclear: return "not clear yet";
    case Reading::TooNoisy: return "too noisy to say";
    case Reading::CannotBeFaster: return "cannot be faster";
    case Reading::NoVerdict: return "no verdict";
    case Reading::None: break;
  }
  return "–";
}

std::string morePairsWords(const SpeedupEstimate& e) {
  if (e.pairs < 1) return "";
  if (!e.hasInterval()) return "e.g. 2 more pairs";
  const double half = std::log(e.hi / e.lo) / 2, at = std::fabs(std::log(e.point)), m = std::log1p(minEffectOf(e));
  const double needed = at > m ? at : m - at;  // to exclude 1, or to fit inside ±min_effect
  if (!(half > 0) || !(needed > 0.05 * half)) return "";
  const int more = static_cast<int>(std::ceil(e.pairs * (half / needed) * (half / needed) - e.pairs));
  if (more > 30) return "";
  const int n = std::max(1, more);
  return "e.g. " + std::to_string(n) + " more pair" + (n == 1 ? "" : "s");
}

std::string listWords(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return s;
}

std::string oneLine(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n' || c == '\r' || c == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// "Channels-last" → "channels-last"; "TF32 matmuls" and "cuDNN autotune" stay as they are.
std::string lowered(const std::string& label) {
  if (label.size() < 2 || !std::isupper(static_cast<unsigned char>(label[0])) || !std::islower(static_cast<unsigned char>(label[1])))
    return label;
  return std::string(1, static_cast<char>(std::tolower(static_cast<unsigned char>(label[0])))) + label.substr(1);
}

std::string capitalised(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

std::string targetWords(std::optional<double> target) {
  return target ? fmtFixed(*target * 100, 1) + " % val acc" : std::string("the target");
}

ChangeWords changeWords(const std::vector<ConfigChange>& diff) {
  std::vector<OneChange> changes;
  for (const auto& c : diff)
    if (!ignored(c)) changes.push_back(oneChange(c));
  return wordsOf(changes);
}

ChangeWords speedupChangeWords(const std::vector<ConfigChange>& diff, const std::vector<std::string>& keys) {
  std::vector<OneChange> changes;
  for (const auto& key : keys)
    for (const auto& c : diff)
      if (const Speedup* s = speedupOfField(c.path); s && key == s->key) changes.push_back(oneChange(c));
  return wordsOf(changes);
}

// ---- compare -------------------------------------------------------------------------------

namespace {

// A run's name in the answer: what differs from the baseline, else its label.
std::string runName(const ComparisonRow& row) {
  const ChangeWords w = changeWords(row.diff);
  return w.empty() ? row.label : w.name;
}

// The row's estimate to the target: its group's, else the single runs' figure (no interval).
SpeedupEstimate targetEstimate(const ComparisonRow& row) {
  if (std::isfinite(row.target.point)) return row.target;
  SpeedupEstimate e;
  if (row.speedup_target) e.point = *row.speedup_target, e.pairs = 1;
  return e;
}

std::string oneRunAnswer(const Comparison& c, const ComparisonRow& row) {
  const std::string name = runName(row), target = targetWords(c.target_acc > 0 ? std::optional<double>(c.target_acc) : std::nullopt);
  if (!row.noSpeedupReason().empty()) return "No speedup for " + name + ": " + row.noSpeedupReason() + ".";
  const SpeedupEstimate e = targetEstimate(row);
  const std::string runs = e.baseline_runs > 0 && e.variant_runs > 0
                               ? "; from " + std::to_string(e.variant_runs) + " runs against the baseline's " + std::to_string(e.baseline_runs)
                               : std::string();
  const ChangeWords w = changeWords(row.diff);
  const std::string todo = w.empty() ? "take " + row.label : w.todo;
  switch (readingOf(e)) {
    case Reading::None: return capitalised(name) + " did not reach " + target + " (the baseline did).";
    case Reading::Faster:
      return capitalised(todo) + ": " + fmtSpeedup(e.point) + " faster to " + target + " than the baseline (" + intervalWords(e) + ")" + runs + ".";
    case Reading::Slower:
      return "Keep the baseline: " + name + " is slower, " + fmtSpeedup(e.point) + " to " + target + " (" + intervalWords(e) + ")" + runs + ".";
    case Reading::Same:
      return capitalised(name) + " and the baseline differ by less than " + percent(minEffectOf(e)) + " to " + target + " (" +
             intervalWords(e) + ").";
    case Reading::NoVerdict:
      return capitalised(name) + " reached " + target + " " + fmtSpeedup(e.point) +
             " as fast as the baseline, from one run each: not a verdict (repeat each at least twice for one).";
    case Reading::TooNoisy:
      return "Too noisy to say whether " + name + " is faster to " + target +
             " than the baseline; what would settle it: more repeats of each, or a quiet machine.";
    default:
      return "Not enough evidence yet: " + name + " measured " + figureWords(e) + " to " + target +
             " against the baseline; what would settle it: more repeats of each, or a quiet machine.";
  }
}

// "None of N is clearly faster": each one's figure while the list is short; beyond three, the
// closest measured one and a count of the rest by why they have no figure (the table has each).
std::string noneFasterAnswer(const Comparison& c, const std::vector<const ComparisonRow*>& groups) {
  const std::string head = "None of the " + std::to_string(groups.size()) + " configurations is clearly faster than the baseline to " +
                           targetWords(c.target_acc > 0 ? std::optional<double>(c.target_acc) : std::nullopt) + ": ";
  std::vector<std::string> figures;
  if (groups.size() <= 3) {
    for (const ComparisonRow* r : groups)
      figures.push_back(runName(*r) + " " + (r->showsSpeedup() ? figureWords(targetEstimate(*r)) : r->withheldWord()));
    return head + listWords(figures) + ".";
  }
  const ComparisonRow* closest = nullptr;
  std::map<std::string, int> withheld;
  int measured = 0;
  for (const ComparisonRow* r : groups) {
    if (!r->showsSpeedup()) {
      ++withheld[r->withheldWord()];
      continue;
    }
    ++measured;
    if (!closest || targetEstimate(*r).point > targetEstimate(*closest).point) closest = r;
  }
  if (closest) figures.push_back("the closest, " + runName(*closest) + ", " + figureWords(targetEstimate(*closest)));
  if (measured > 1) figures.push_back(std::to_string(measured - 1) + " more measured");
  for (const auto& [word, n] : withheld) figures.push_back(std::to_string(n) + " " + word);
  return head + listWords(figures) + ".";
}

}  // namespace

std::string compareAnswer(const Comparison& c) {
  std::vector<const ComparisonRow*> runs;
  for (const auto& row : c.rows)
    if (!row.is_baseline) runs.push_back(&row);
  if (runs.empty()) return "Nothing to compare: give run folders besides the baseline.";
  // Repeats of one configuration share one estimate: one row of each group speaks for it; repeats
  // of the baseline give none.
  std::vector<const ComparisonRow*> groups;
  for (const ComparisonRow* r : runs)
    if (!r->repeat_of_baseline && std::none_of(groups.begin(), groups.end(), [&](const ComparisonRow* g) { return g->group == r->group; }))
      groups.push_back(r);
  if (groups.empty())
    return "No speedup to give: every run repeats the baseline's config, so their differences are this machine's noise.";
  if (groups.size() == 1) return oneRunAnswer(c, *groups.front());
  const ComparisonRow* best = nullptr;
  for (const ComparisonRow* r : groups)
    if (r->showsSpeedup() && readingOf(r->target) == Reading::Faster && (!best || r->target.point > best->target.point)) best = r;
  const std::string n = std::to_string(groups.size());
  if (best) return "Fastest of " + n + " configurations: " + oneRunAnswer(c, *best);
  return noneFasterAnswer(c, groups);
}

render::Table answerTable(const std::string& title, const std::string& whatTitle) {
  render::Table t;
  t.title = title;
  t.columns = {{"what", whatTitle, ""}, {"decision", "Decision", ""}, {"to_target", "× to target (interval)", "x"}};
  return t;
}

void addAnswerRow(render::Table& t, const std::string& what, const std::string& decision, const SpeedupEstimate& e) {
  const std::string figure = figureWords(e);
  t.rows.push_back({render::Cell::str(what), render::Cell::str(decision),
                    std::isfinite(e.point) ? render::Cell::num(figure, e.point) : render::Cell::str(figure)});
}

render::Table compareAnswerTable(const Comparison& c) {
  render::Table t = answerTable("Against the baseline", "Run (what differs)");
  for (const auto& row : c.rows) {
    if (row.is_baseline) continue;
    const std::string what = row.label + (row.diff.empty() ? "" : ": " + runName(row));
    const SpeedupEstimate e = targetEstimate(row);
    if (!row.showsSpeedup()) addAnswerRow(t, what, row.withheldWord(), SpeedupEstimate{});
    else if (!std::isfinite(e.point)) addAnswerRow(t, what, "not reached", e);
    else addAnswerRow(t, what, readingWords(readingOf(e), minEffectOf(e)), e);
  }
  return t;
}

}  // namespace wb::compare
