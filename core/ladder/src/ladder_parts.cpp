// A ladder row from a step measured by parts (its try.json, wb/experiment/composed_try.h).
#include <cmath>

#include "wb/proto/try_record.h"
#include "wb/ladder/ladder.h"
#include "wb/stats/estimate_json.h"

namespace wb::ladder {
using nlohmann::json;

namespace {
std::optional<double> numberAt(const proto::TryRecord& t, const char* metric, bool variant) {
  const auto it = t.medians.find(metric);
  if (it == t.medians.end()) return std::nullopt;
  const double v = variant ? it->second.variant : it->second.baseline;
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}
}  // namespace

void applyByParts(LadderRow& row, const json& doc) {
  const proto::TryRecord t = proto::tryRecordFromJson(doc);
  row.estimates.to_target = stats::estimateFromJson(t.estimate.value("to_target", json()));
  row.estimates.throughput = stats::estimateFromJson(t.estimate.value("throughput", json()));
  row.estimates.wall = row.estimates.to_target;  // by parts, the time measured is the time to the target
  row.repeats = std::max(1, int(t.variant_runs.size()));
  row.reached = t.reached ? row.repeats : 0;
  row.target_s = t.reached ? numberAt(t, "time_to_target_s", true) : std::nullopt;
  row.wall_s = numberAt(t, "time_to_target_s", true);
  row.train_sps = numberAt(t, "train_samples_per_s", true);
  if (std::isfinite(row.estimates.to_target.point)) {
    row.cumulative_target = row.estimates.to_target.point;
    row.cumulative = row.estimates.to_target.point;
  }
  if (row.estimates.to_target.verdict == stats::Verdict::NoInterval && t.verdictWord() == "contended")
    row.contention = "the segments were measured while another process used the CPU";
  row.settled = "by parts";
  if (!t.words.empty()) row.step.note += (row.step.note.empty() ? "" : "; ") + ("by parts: " + t.words);
}

}  // namespace wb::ladder
