#pragma once
// The answer: the one sentence a person reads first after an experiment, naming what to do, by
// how much (with its interval), how sure, and why. Each experiment kind builds its own from its
// typed record with one function (try: wb/experiment/try.h tryAnswer; ladder: wb/ladder/ladder.h
// ladderAnswer; tune: wb/tune/tune.h tuneAnswer; compare: compareAnswer below), and stores it in
// its record ("answer"), so the CLI, the window, the exports and the events print one string.
// The words they share live here: how an estimate reads, and a change of config in the option
// schema's labels (never its keys). Values only; no shared state.
#include <optional>
#include <string>
#include <vector>

#include "wb/compare/compare.h"
#include "wb/render/table.h"
#include "wb/stats/stats.h"

namespace wb::compare {

// How an estimate reads to a person. Only Faster and Slower are verdicts; a figure of any other
// reading is never worded as one.
enum class Reading {
  Faster,
  Slower,
  Same,        // within noise, the whole interval inside ±min_effect: "differs by less than 2 %"
  Unclear,     // within noise, the interval reaching past ±min_effect: not enough evidence yet
  TooNoisy,    // within noise, an interval wider than any effect it could detect (kTooNoisyHalfWidth)
  CannotBeFaster,  // an upper bound below 1 + min_effect ("at most 0.97×"): runs cut before the target
  NoVerdict,   // one run or pair each, or a bound that does not settle it: a figure, not a verdict
  None,        // no figure at all
};

// An interval whose half-width (its high end over its point, on the log scale) passes 25 %
// could only have detected an effect larger than any one speedup lever brings: "too noisy to
// say" instead of "[0.03, 30.13]".
inline constexpr double kTooNoisyHalfWidth = 0.25;

Reading readingOf(const stats::SpeedupEstimate& e);
// The figure as the answer and the short tables write it: "1.10× (95 %: 1.04-1.17×)", "at most
// 0.97×", "too noisy to say", "1.26× (one pair: not a verdict)", "–".
std::string figureWords(const stats::SpeedupEstimate& e);
// The figure with its reading, where one figure stands alone (a ladder's speedup row, a search's
// finals): "1.70× faster (95 %: 1.40-2.00×)", "1.00×, < 2 % either way (95 %: 0.99-1.01×)",
// "1.05×, not clear yet (95 %: 0.88-1.24×)", "too noisy to say", "at most 0.97×".
std::string figureWithReading(const stats::SpeedupEstimate& e);
// The reading in a word or two, for a table's decision column: "faster", "slower", "< 2 %
// either way", "not clear yet", "too noisy to say", "cannot be faster", "no verdict", "–".
std::string readingWords(Reading r, double minEffect);
// "95 %", "99.5 %": an interval's confidence as a person reads it.
std::string levelWords(double level);
// What would settle an unclear estimate of `pairs` pairs: "e.g. 3 more pairs" (the pairs that
// would narrow its interval enough, were they to scatter as these did), "" when it cannot tell.
std::string morePairsWords(const stats::SpeedupEstimate& e);

// A change of config in words, by the option schema's labels: the imperative ("turn on
// channels-last", "set loader workers to 2"), the gerund ("turning on channels-last") and a
// short name ("channels-last", "loader workers 2"). `name` and `seed` are left out.
struct ChangeWords {
  std::string todo, doing, name;
  bool empty() const { return todo.empty(); }
};
ChangeWords changeWords(const std::vector<ConfigChange>& diff);
// The same for only the fields of the speedups named by `keys` (wb/common/speedups.h), in order.
ChangeWords speedupChangeWords(const std::vector<ConfigChange>& diff, const std::vector<std::string>& keys);
// "a", "a and b", "a, b and c".
std::string listWords(const std::vector<std::string>& items);
// `text` on one line: line breaks (and runs of spaces) become one space, the ends trimmed, so a
// message quoted in an answer keeps it one sentence.
std::string oneLine(const std::string& text);
// The first letter upper-case (ASCII).
std::string capitalised(std::string s);
// A label inside a sentence: "Channels-last" → "channels-last"; "TF32 matmuls" and "cuDNN
// autotune" stay as they are.
std::string lowered(const std::string& label);
// "71.4 % val acc" (the target an answer names), or "the target" when unknown.
std::string targetWords(std::optional<double> target_acc);

// `compare`'s answer: the runs against the baseline, the clearest first.
std::string compareAnswer(const Comparison& comparison);

// The short table every experiment kind prints by default: what changed, the decision and the
// × to target with its interval, one row each.
render::Table answerTable(const std::string& title, const std::string& whatTitle);
void addAnswerRow(render::Table& t, const std::string& what, const std::string& decision, const stats::SpeedupEstimate& e);
// `compare`'s short table: one row per run.
render::Table compareAnswerTable(const Comparison& comparison);

}  // namespace wb::compare
