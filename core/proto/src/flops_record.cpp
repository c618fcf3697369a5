#include "wb/proto/flops_record.h"

#include <algorithm>
#include <cmath>

#include "wb/proto/events.h"

namespace wb::proto {
using nlohmann::json;

namespace {

std::optional<double> ratioPct(double achieved, const std::optional<PeakFigure>& peak) {
  if (!peak || !(peak->gflop_per_s > 0) || !(achieved >= 0)) return std::nullopt;
  return 100.0 * achieved / peak->gflop_per_s;
}

json peakJson(const PeakFigure& p) { return {{"gflop_per_s", p.gflop_per_s}, {"what", p.what}}; }

std::optional<PeakFigure> readPeak(const json& parent, const char* key) {
  const json& p = objectOr(parent, key);
  const double g = numberOr(p, "gflop_per_s", 0);
  if (!(g > 0)) return std::nullopt;
  return PeakFigure{g, stringOr(p, "what", "")};
}

std::optional<double> optionalNumber(const json& j, const char* key) {
  const double v = numberOr(j, key, std::nan(""));
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

}  // namespace

std::optional<double> FlopsFigures::pctOfPeak() const { return ratioPct(achieved_gflop_per_s, peak); }
std::optional<double> FlopsFigures::pctOfDatasheet() const { return ratioPct(achieved_gflop_per_s, datasheet); }

std::optional<double> FlopsFigures::dataPathShare() const {
  if (!compute_only_step_ms || !step_ms || !(*step_ms > 0)) return std::nullopt;
  return std::max(0.0, (*step_ms - *compute_only_step_ms) / *step_ms);
}

json flopsJson(const FlopsFigures& f) {
  json j = {{"convention", f.convention},
            {"per_step", f.per_step},
            {"per_sample", f.per_sample},
            {"achieved_gflop_per_s", f.achieved_gflop_per_s}};
  if (!f.uncounted.empty()) j["uncounted"] = f.uncounted;
  if (f.peak) {
    j["peak"] = peakJson(*f.peak);
    j["pct_of_peak"] = *f.pctOfPeak();
  } else if (!f.no_peak.empty()) {
    j["no_peak"] = f.no_peak;
  }
  if (f.datasheet) {
    j["datasheet"] = peakJson(*f.datasheet);
    j["pct_of_datasheet"] = *f.pctOfDatasheet();
  } else if (!f.no_datasheet.empty()) {
    j["no_datasheet"] = f.no_datasheet;
  }
  if (f.compute_only_step_ms) j["compute_only_step_ms"] = *f.compute_only_step_ms;
  if (f.step_ms) j["step_ms"] = *f.step_ms;
  if (auto share = f.dataPathShare()) j["data_path_share"] = *share;
  return j;
}

std::optional<FlopsFigures> readFlops(const json& parent) {
  const json& j = objectOr(parent, kFlopsKey);
  if (j.empty()) return std::nullopt;
  FlopsFigures f;
  f.convention = stringOr(j, "convention", kFlopsConventionShort);
  f.per_step = numberOr(j, "per_step", 0);
  f.per_sample = numberOr(j, "per_sample", 0);
  f.uncounted = stringOr(j, "uncounted", "");
  f.achieved_gflop_per_s = numberOr(j, "achieved_gflop_per_s", 0);
  f.peak = readPeak(j, "peak");
  f.no_peak = stringOr(j, "no_peak", "");
  f.datasheet = readPeak(j, "datasheet");
  f.no_datasheet = stringOr(j, "no_datasheet", "");
  f.compute_only_step_ms = optionalNumber(j, "compute_only_step_ms");
  f.step_ms = optionalNumber(j, "step_ms");
  return f;
}

}  // namespace wb::proto
