#include "wb/stats/estimate_json.h"

#include "wb/proto/fields.h"

namespace wb::stats {
using nlohmann::json;

WB_FIELDS(SpeedupEstimate) {
  f("point", e.point), f("lo", e.lo), f("hi", e.hi), f("pairs", e.pairs);
  f("verdict", proto::words(e.verdict, verdictWord, verdictFromWord));
  f("method", e.method), f("noise_band", e.noise_band);
  f("baseline_runs", e.baseline_runs), f("variant_runs", e.variant_runs);
  f("level", e.level), f("min_effect", e.min_effect), f("set_aside", e.set_aside);
}

json estimateJson(const SpeedupEstimate& e) {
  json out = json::object();
  proto::fieldsToJson(e, out);
  return out;
}

Verdict verdictFromWord(const std::string& word) {
  for (Verdict v : {Verdict::Faster, Verdict::Slower, Verdict::WithinNoise})
    if (verdictWord(v) == word) return v;
  return Verdict::NoInterval;
}

SpeedupEstimate estimateFromJson(const json& j) {
  SpeedupEstimate e;
  if (!j.is_object()) return e;
  e.level = 0.95;     // older files: 95 % intervals
  e.min_effect = 0;   // older files: judged against the band alone
  proto::fieldsFromJson(j, e);
  return e;
}

}  // namespace wb::stats
