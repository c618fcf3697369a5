#include "wb/report/estimate_json.h"

#include <cmath>

namespace wb::report {
using nlohmann::json;

namespace {
json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double numOr(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
}
}  // namespace

json estimateJson(const SpeedupEstimate& e) {
  return {{"point", num(e.point)},   {"lo", num(e.lo)},
          {"hi", num(e.hi)},         {"pairs", e.pairs},
          {"verdict", verdictWord(e.verdict)}, {"method", e.method},
          {"noise_band", e.noise_band}, {"baseline_runs", e.baseline_runs}, {"variant_runs", e.variant_runs},
          {"level", e.level},        {"min_effect", e.min_effect}, {"set_aside", e.set_aside}};
}

Verdict verdictFromWord(const std::string& word) {
  for (Verdict v : {Verdict::Faster, Verdict::Slower, Verdict::WithinNoise})
    if (verdictWord(v) == word) return v;
  return Verdict::NoInterval;
}

SpeedupEstimate estimateFromJson(const json& j) {
  SpeedupEstimate e;
  if (!j.is_object()) return e;
  e.point = numOr(j, "point");
  e.lo = numOr(j, "lo");
  e.hi = numOr(j, "hi");
  e.pairs = j.value("pairs", 0);
  e.verdict = verdictFromWord(j.value("verdict", ""));
  e.method = j.value("method", "");
  e.noise_band = j.value("noise_band", 0.0);
  e.baseline_runs = j.value("baseline_runs", 0);
  e.variant_runs = j.value("variant_runs", 0);
  e.level = j.value("level", 0.95);             // older files: 95 % intervals
  e.min_effect = j.value("min_effect", 0.0);    // older files: judged against the band alone
  e.set_aside = j.value("set_aside", 0);
  return e;
}

}  // namespace wb::report
