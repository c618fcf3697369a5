#include "wb/stats/time_to_target_json.h"

#include <cmath>

#include "wb/stats/estimate_json.h"

namespace wb::stats {
using nlohmann::json;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double numOr(const json& j, const char* key, double otherwise = kNaN) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : otherwise;
}
int intOr(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
}
std::string strOr(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
bool boolOr(const json& j, const char* key, bool otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : otherwise;
}
const json& objectAt(const json& j, const char* key) {
  static const json empty = json::object();
  const auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

json armJson(const ArmSamples& a) {
  return {{"runs", a.runs}, {"censored", a.censored}, {"log_sd", num(a.log_sd)}, {"samples", logEstimateJson(a.samples)}};
}
ArmSamples armFromJson(const json& j) {
  ArmSamples a;
  a.runs = intOr(j, "runs");
  a.censored = intOr(j, "censored");
  a.log_sd = numOr(j, "log_sd");
  a.samples = logEstimateFromJson(objectAt(j, "samples"));
  return a;
}

json partJson(const PartInterval& p) {
  return {{"name", p.name}, {"point", num(p.point)}, {"lo", num(p.lo)}, {"hi", num(p.hi)}};
}
PartInterval partFromJson(const json& j) {
  return {strOr(j, "name"), numOr(j, "point"), numOr(j, "lo"), numOr(j, "hi")};
}
}  // namespace

json logEstimateJson(const LogEstimate& e) {
  return {{"value", num(e.value)}, {"log_se", num(e.log_se)}, {"df", num(e.df)}};
}

LogEstimate logEstimateFromJson(const json& j) {
  LogEstimate e;
  if (!j.is_object()) return e;
  e.value = numOr(j, "value");
  e.log_se = numOr(j, "log_se");
  e.df = numOr(j, "df", kExactDf);
  return e;
}

json targetRunsJson(const std::vector<TargetRun>& runs) {
  json out = json::array();
  for (const auto& r : runs) out.push_back({{"samples", num(r.samples)}, {"reached", r.reached}, {"seed", r.seed}});
  return out;
}

Result<std::vector<TargetRun>> targetRunsFromJson(const json& j) {
  if (!j.is_array()) return makeError(Errc::InvalidConfig, "runs must be an array of {samples, reached, seed}");
  std::vector<TargetRun> runs;
  for (size_t i = 0; i < j.size(); ++i) {
    const json& r = j[i];
    const std::string at = "runs[" + std::to_string(i) + "]";
    if (!r.is_object() || !r.contains("samples") || !r["samples"].is_number() || !(r["samples"].get<double>() > 0))
      return makeError(Errc::InvalidConfig, at + ".samples must be a number > 0 (the samples when it reached the target)");
    TargetRun run;
    run.samples = r["samples"].get<double>();
    run.reached = boolOr(r, "reached", true);
    if (r.contains("seed") && r["seed"].is_number_unsigned()) run.seed = r["seed"].get<uint64_t>();
    runs.push_back(run);
  }
  return runs;
}

std::string samplesBoundWord(SamplesBound b) {
  switch (b) {
    case SamplesBound::AtLeast: return "at least";
    case SamplesBound::AtMost: return "at most";
    case SamplesBound::Unknown: return "unknown";
    case SamplesBound::Exact: break;
  }
  return "exact";
}

SamplesBound samplesBoundFromWord(const std::string& word) {
  for (SamplesBound b : {SamplesBound::AtLeast, SamplesBound::AtMost, SamplesBound::Unknown})
    if (samplesBoundWord(b) == word) return b;
  return SamplesBound::Exact;
}

SamplesVerdict samplesVerdictFromWord(const std::string& word) {
  for (SamplesVerdict v : {SamplesVerdict::More, SamplesVerdict::Fewer, SamplesVerdict::WithinNoise})
    if (samplesVerdictWord(v) == word) return v;
  return SamplesVerdict::NoInterval;
}

json samplesComparisonJson(const SamplesComparison& c) {
  return {{"ratio", num(c.ratio)},       {"lo", num(c.lo)},          {"hi", num(c.hi)},
          {"level", c.level},            {"verdict", samplesVerdictWord(c.verdict)},
          {"bound", samplesBoundWord(c.bound)}, {"reference", armJson(c.reference)},
          {"variant", armJson(c.variant)}, {"log_se", num(c.log_se)}, {"df", num(c.df)},
          {"min_effect", c.min_effect},  {"method", c.method}};
}

SamplesComparison samplesComparisonFromJson(const json& j) {
  SamplesComparison c;
  if (!j.is_object()) return c;
  c.ratio = numOr(j, "ratio");
  c.bound = samplesBoundFromWord(strOr(j, "bound"));
  const bool open = c.bound == SamplesBound::AtLeast || c.bound == SamplesBound::Unknown;
  c.lo = numOr(j, "lo");
  c.hi = numOr(j, "hi", open ? kInf : kNaN);  // ∞ is written as null
  c.level = numOr(j, "level", 0.95);
  c.verdict = samplesVerdictFromWord(strOr(j, "verdict"));
  c.reference = armFromJson(objectAt(j, "reference"));
  c.variant = armFromJson(objectAt(j, "variant"));
  c.log_se = numOr(j, "log_se");
  c.df = numOr(j, "df", 0);
  c.min_effect = numOr(j, "min_effect", kDefaultMinEffect);
  c.method = strOr(j, "method");
  return c;
}

json timeToTargetJson(const TimeToTargetEstimate& e) {
  json parts = json::array();
  for (const auto& p : e.parts) parts.push_back(partJson(p));
  return {{"speedup", estimateJson(e.speedup)}, {"baseline_s", num(e.baseline_s)}, {"variant_s", num(e.variant_s)},
          {"throughput_factor", num(e.throughput_factor)}, {"samples_factor", num(e.samples_factor)},
          {"log_se", num(e.log_se)}, {"df", num(e.df)}, {"math_kept", e.math_kept},
          {"samples_verdict", samplesVerdictWord(e.samples_verdict)}, {"bound", samplesBoundWord(e.bound)},
          {"parts", parts}};
}

TimeToTargetEstimate timeToTargetFromJson(const json& j) {
  TimeToTargetEstimate e;
  if (!j.is_object()) return e;
  e.speedup = estimateFromJson(objectAt(j, "speedup"));
  e.bound = samplesBoundFromWord(strOr(j, "bound"));
  const bool open = e.bound == SamplesBound::AtLeast || e.bound == SamplesBound::Unknown;
  if (open && std::isfinite(e.speedup.lo) && !std::isfinite(e.speedup.hi)) e.speedup.hi = kInf;
  e.baseline_s = numOr(j, "baseline_s");
  e.variant_s = numOr(j, "variant_s");
  e.throughput_factor = numOr(j, "throughput_factor");
  e.samples_factor = numOr(j, "samples_factor");
  e.log_se = numOr(j, "log_se");
  e.df = numOr(j, "df", kExactDf);
  e.math_kept = boolOr(j, "math_kept", true);
  e.samples_verdict = samplesVerdictFromWord(strOr(j, "samples_verdict"));
  const auto it = j.find("parts");
  if (it != j.end() && it->is_array())
    for (const auto& p : *it) e.parts.push_back(partFromJson(p));
  return e;
}

}  // namespace wb::stats
