// A ladder row from a step measured by parts (its try.json, wb/experiment/composed_try.h).
#include <cmath>

#include "wb/ladder/ladder.h"
#include "wb/report/estimate_json.h"

namespace wb::ladder {
using nlohmann::json;

namespace {
std::optional<double> numberAt(const json& doc, const char* metric, const char* side) {
  const json v = doc.value("medians", json::object()).value(metric, json::object()).value(side, json());
  return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
}
}  // namespace

void applyByParts(LadderRow& row, const json& doc) {
  const json est = doc.value("estimate", json::object());
  row.estimates.to_target = report::estimateFromJson(est.value("to_target", json()));
  row.estimates.throughput = report::estimateFromJson(est.value("throughput", json()));
  row.estimates.wall = row.estimates.to_target;  // by parts, the time measured is the time to the target
  const bool reached = doc.value("reached", false);
  row.repeats = std::max(1, int(doc.value("variant_runs", json::array()).size()));
  row.reached = reached ? row.repeats : 0;
  row.target_s = reached ? numberAt(doc, "time_to_target_s", "variant") : std::nullopt;
  row.wall_s = numberAt(doc, "time_to_target_s", "variant");
  row.train_sps = numberAt(doc, "train_samples_per_s", "variant");
  if (std::isfinite(row.estimates.to_target.point)) {
    row.cumulative_target = row.estimates.to_target.point;
    row.cumulative = row.estimates.to_target.point;
  }
  if (row.estimates.to_target.verdict == report::Verdict::NoInterval &&
      est.value("to_target", json::object()).value("verdict", std::string()) == "contended")
    row.contention = "the segments were measured while another process used the CPU";
  row.settled = "by parts";
  const std::string words = doc.value("words", std::string());
  if (!words.empty()) row.step.note += (row.step.note.empty() ? "" : "; ") + ("by parts: " + words);
}

}  // namespace wb::ladder
