#include "wb/records/speed_record.h"

#include "wb/proto/fields.h"
#include "wb/stats/estimate_json.h"

namespace wb::stats {
// The rounds' noise as the speed record writes it (found by the field lists through its namespace).
WB_FIELDS(RoundsNoise) { f("sigma", e.sigma), f("df", e.df), f("band", proto::derived(e.band())); }
}  // namespace wb::stats

namespace wb::records {
using nlohmann::json;

namespace {

// The estimate as try.json's and the tables' readers take it: the product's record, its text, and
// "contended" for its verdict when no rounds or pairs could be compared.
json estimateOf(const SpeedRecord& r) {
  json out = stats::estimateJson(r.estimate);
  out["text"] = r.unchanged() ? "1.00× (the training steps are untouched)" : stats::formatEstimate(r.estimate);
  if (r.contended) out["verdict"] = "contended";
  return out;
}

}  // namespace

WB_FIELDS(SpeedRecord) {
  f("kind", e.kind), f("changed", e.changed), f("device", e.device);
  f("steps_per_segment", e.steps_per_segment), f("steps_sized", e.steps_sized);
  f("steps_per_trial", e.steps_per_trial), f("evaluations_per_trial", e.evaluations_per_trial);
  f("rounds", e.rounds), f("baseline_rates", e.baseline_rates), f("variant_rates", e.variant_rates);
  f("variant_first", e.variant_first), f("noise", e.noise);
  f("estimate", proto::via(e.estimate, [&e](const stats::SpeedupEstimate&) { return estimateOf(e); }, stats::estimateFromJson));
  f("other_cores", e.other_cores), f("set_aside", e.set_aside), f("load_resolution_cores", e.load_resolution_cores), f("busiest_others", e.busiest_others);
  f("contended", e.contended), f("cannot_be_faster", e.cannot_be_faster), f("total_s", e.total_s);
  f("baseline_eval_s", e.baseline_eval_s), f("variant_eval_s", e.variant_eval_s);
  f("baseline_train_rates", e.baseline_train_rates);
  f("variant_startup_s", e.variant_startup_s), f("pairs_run", e.pairs_run), f("settled", e.settled);
  if (e.kind == "evaluation segments") f("passes_per_segment", proto::derived(e.steps_per_segment.value_or(0)));
}

json speedRecordJson(const SpeedRecord& record) { return proto::writeAs(record); }

SpeedRecord speedRecordFromJson(const json& doc) { return proto::readAs<SpeedRecord>(doc); }

SpeedRecord unchangedSpeed() {
  SpeedRecord r;
  r.kind = "unchanged";
  r.changed = "nothing a training step's time depends on";
  r.estimate.point = r.estimate.lo = r.estimate.hi = 1;
  r.estimate.verdict = stats::Verdict::WithinNoise;
  r.estimate.method = "not measured: the change leaves the training steps as they are";
  return r;
}

}  // namespace wb::records
