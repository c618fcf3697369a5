#include "composed_words.h"

#include "wb/render/table.h"
#include "wb/stats/variant_looks.h"

namespace wb::experiment::detail {
using nlohmann::json;

// What the replay of early stopping found, after the composed words: "; it would stop 3 of the 5
// reference runs, each after it reached the target (at 64 % of their samples): ...".
std::string replayWords(const json& replay) {
  if (!replay.is_object()) return "";
  const json& runs = replay["runs"];
  int stops = 0, first = 0;
  double fraction = 0;
  for (const auto& r : runs) {
    if (!r.value("stops", false)) continue;
    ++stops;
    first += r.value("target_first", false) ? 1 : 0;
    fraction += r.value("fraction_of_run", 1.0);
  }
  const std::string of = " of the " + std::to_string(runs.size()) + " reference runs";
  if (stops == 0) return "; early stopping would stop none" + of + " within their epochs: it changes nothing here";
  const std::string share = wb::fmtFixed(100 * fraction / stops, 0) + " % of their samples";
  if (first == stops)
    return "; it would stop " + std::to_string(stops) + of + ", each after it reached the target (at " + share +
           "): the runs end sooner, the time to the target is the same";
  return "; it would stop " + std::to_string(stops - first) + of + " before they reach the target (at " + share + ")";
}

// Why the variant's runs stopped before their last, when the answer is that it cannot be faster.
std::string looksWords(const json& looks) {
  if (!looks.is_object()) return "";
  if (looks.value("stopped", std::string()) == "contended")
    return "; no run to the target was started: the question is only whether it is faster, and a throughput measured "
           "under contention cannot say";
  if (looks.value("stopped", std::string()) != stats::lookStopName(stats::LookStop::CannotBeFaster)) return "";
  if (looks.contains("assumed"))
    return "; no run to the target: a larger global batch at an lr scaled at most in proportion is taken to need no fewer "
           "samples than the baseline (Shallue et al. 2018), and even so, with its quickest start-up and its evaluation shared by "
           "its ranks, it cannot be faster";
  return "; its runs to the target stopped after " + std::to_string(looks.value("runs", 0)) + " of " +
         std::to_string(looks.value("max_runs", 0)) + ": it could no longer be shown faster";
}

}  // namespace wb::experiment::detail
