#include "wb/proto/try_record.h"

#include <type_traits>

#include "wb/proto/fields.h"

namespace wb::proto {
using nlohmann::json;

namespace {

json same(const json& j) { return j; }
json orNullString(const std::optional<std::string>& s) { return s ? json(*s) : json(); }
std::optional<std::string> stringOrNone(const json& j) {
  return j.is_string() ? std::optional<std::string>(j.get<std::string>()) : std::nullopt;
}

}  // namespace

WB_FIELDS(TryPairRecord) {
  f("pair", e.pair), f("variant_first", e.variant_first), f("counted", e.counted);
  f("reference_dir", e.reference_dir), f("variant_dir", e.variant_dir), f("seed", e.seed);
}

WB_FIELDS(TryArmRecord) { f("label", e.label), f("config", e.config); }

WB_FIELDS(TryMedian) { f("baseline", e.baseline), f("variant", e.variant); }

WB_FIELDS(TryRecord) {
  // Written: what this try has; read: every key (a key absent keeps its default).
  constexpr bool writing = std::is_const_v<std::remove_reference_t<decltype(e)>>;
  f("answer", e.answer);
  f("status", e.status), f("cancelled_at", e.cancelled_at), f("speedup", e.speedup), f("setting", e.setting);
  f("measured_at", e.measured_at), f("baseline", e.baseline), f("variant", e.variant), f("same_config", e.same_config);
  f("target_acc", e.target_acc), f("target", proto::via(e.target, orNullString, stringOrNone));
  f("target_source", e.target_source);
  f("noise_band", e.noise_band), f("min_effect", e.min_effect);
  f("max_pairs", e.max_pairs), f("fixed_pairs", e.fixed_pairs), f("pairs", e.pairs), f("settled", e.settled);
  f("reached", e.reached), f("medians", e.medians), f("estimate", e.estimate), f("runs", e.runs);
  f("run_command", e.run_command), f("variant_command", proto::via(e.variant_command, orNullString, stringOrNone));
  if (!writing || !e.method.empty()) f("method", e.method);
  if (!writing || !e.method_reason.empty()) f("method_reason", e.method_reason);
  if (!writing || !e.error.empty()) f("error", e.error);
  if (!writing || !e.kept.empty()) f("kept", e.kept);
  f("variant_looks", e.variant_looks);  // absent when null
  // A try by parts that measured its parts has every part's key, null where one was not measured;
  // pairs of whole runs, or a try by parts that stopped before its parts, have none.
  if (writing && !(e.byParts() && e.math.is_object())) return;
  for (auto [key, part] : {std::pair{"math", &e.math}, std::pair{"throughput", &e.throughput}, std::pair{"evaluation", &e.evaluation},
                           std::pair{"early_stopping", &e.early_stopping}, std::pair{"samples", &e.samples},
                           std::pair{"references", &e.references}, std::pair{"composed", &e.composed}})
    f(key, proto::via(*part, same, same));
  f("variant_runs", e.variant_runs), f("words", e.words), f("training_only", e.training_only);
}

std::string TryRecord::verdictWord() const {
  const json* t = estimate.is_object() && estimate.contains("to_target") ? &estimate["to_target"] : nullptr;
  return t && t->is_object() && t->contains("verdict") && (*t)["verdict"].is_string() ? (*t)["verdict"].get<std::string>()
                                                                                       : std::string();
}

json tryRecordJson(const TryRecord& record) { return proto::writeAs(record); }

TryRecord tryRecordFromJson(const json& doc) { return proto::readAs<TryRecord>(doc); }

}  // namespace wb::proto
