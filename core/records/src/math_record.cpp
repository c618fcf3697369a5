#include "wb/records/math_record.h"

#include "wb/proto/fields.h"

namespace wb::records {
using nlohmann::json;

namespace {

json stepWord(int64_t step) { return step == 0 ? json("eval") : json(step); }
int64_t stepOf(const json& j) { return j.is_number_integer() ? j.get<int64_t>() : 0; }
json nullIfEmpty(const std::string& s) { return s.empty() ? json() : json(s); }
std::string stringOr(const json& j) { return j.is_string() ? j.get<std::string>() : std::string(); }
json nullIfZero(int64_t step) { return step > 0 ? json(step) : json(); }

}  // namespace

WB_FIELDS(MathStep) {
  f("step", proto::via(e.step, stepWord, stepOf));
  f("baseline", e.baseline), f("variant", e.variant), f("repeat", proto::orNull(e.repeat));
  f("deviation", e.deviation), f("tolerance", e.tolerance), f("within", proto::derived(e.deviation <= e.tolerance));
}

WB_FIELDS(MathCheckRecord) {
  f("kind", proto::derived(std::string("math-check"))), f("changed", e.changed);
  f("speedup", proto::via(e.speedup, nullIfEmpty, stringOr));
  f("device", e.device), f("train_samples", e.train_samples), f("dataset_id", e.dataset_id);
  f("checked", e.checked), f("keeps_math", e.keeps_math), f("inactive", e.inactive), f("steps", e.steps);
  f("tolerance_per_step", e.tolerance_per_step), f("tolerance", e.tolerance_rule);
  f("max_deviation", e.max_deviation), f("max_at_step", e.max_at_step), f("max_repeat_deviation", e.max_repeat_deviation);
  f("diverged_at_step", proto::via(e.diverged_at_step, nullIfZero, stepOf));
  f("rows", e.rows), f("verdict", e.verdict), f("total_s", e.total_s);
}

json mathCheckJson(const MathCheckRecord& record) { return proto::writeAs(record); }

MathCheckRecord mathCheckFromJson(const json& doc) { return proto::readAs<MathCheckRecord>(doc); }

}  // namespace wb::records
