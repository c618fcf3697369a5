#include "wb/compare/noise_of_repeats.h"

#include <algorithm>
#include <cmath>

#include "wb/common/clock.h"
#include "wb/compare/compare.h"
#include "wb/stats/stats.h"

namespace wb::compare {
using records::AccuracySpread;
using records::HostNoise;
using records::RunRecord;

namespace {

// A finished run measured alone: what a repeat may contribute to the spread.
bool cleanRepeat(const RunRecord& run, const RunMetrics& m) {
  return (run.status == "ok" || run.status == "early-stopped") && !m.contention.contended;
}

}  // namespace

std::string unusableRepeats(const std::vector<RunRecord>& repeats) {
  std::string out;
  for (const auto& run : repeats) {
    const RunMetrics m = computeMetrics(run, std::nullopt);
    if (cleanRepeat(run, m)) continue;
    const std::string why = m.contention.contended ? (m.contention.note.empty() ? "measured under load" : m.contention.note)
                                                   : (run.status.empty() ? "unfinished" : run.status);
    out += (out.empty() ? "" : "; ") + (run.id.empty() ? run.dir : run.id) + " (" + why + ")";
  }
  return out;
}

std::optional<AccuracySpread> accuracySpreadOfRepeats(const std::vector<RunRecord>& repeats, const std::string& source) {
  std::vector<double> best;
  for (const auto& run : repeats) {
    const RunMetrics m = computeMetrics(run, std::nullopt);
    if (m.best_val_acc && cleanRepeat(run, m)) best.push_back(*m.best_val_acc * 100.0);
  }
  if (best.size() < 2) return std::nullopt;
  double mean = 0, ss = 0;
  for (double b : best) mean += b / double(best.size());
  for (double b : best) ss += (b - mean) * (b - mean);
  AccuracySpread s;
  s.sd_pp = std::sqrt(ss / double(best.size() - 1));
  s.runs = static_cast<int>(best.size());
  s.source = source;
  s.measured_at = utcNowIso();
  return s;
}

std::optional<HostNoise> noiseFromRepeats(const std::vector<RunRecord>& repeats, const std::string& source) {
  std::vector<double> rates, targets, walls;
  std::vector<std::pair<double, double>> kernel;
  const std::optional<double> target =
      repeats.empty() ? std::nullopt : computeMetrics(repeats.front(), std::nullopt).best_val_acc;
  for (const auto& run : repeats) {
    const RunMetrics m = computeMetrics(run, target);
    if (!cleanRepeat(run, m)) continue;
    if (m.train_samples_per_s) rates.push_back(*m.train_samples_per_s);
    if (m.time_to_target_s) targets.push_back(*m.time_to_target_s);
    if (m.run_wall_s) walls.push_back(*m.run_wall_s);
    if (auto h = hostSpeedOf(run)) kernel.emplace_back(h->before_ms, h->after_ms);
  }
  if (rates.size() < 2 && targets.size() < 2) return std::nullopt;
  HostNoise n;
  n.measured = true;
  n.band = 0;
  for (const auto& [metric, values] : {std::pair{"train_samples_per_s", &rates}, {"time_to_target_s", &targets},
                                       {"run_wall_s", &walls}}) {
    const double b = stats::bandOfRepeats(*values);
    if (!std::isfinite(b)) continue;
    n.bands[metric] = b;
    n.runs = std::max(n.runs, static_cast<int>(values->size()));
    if (std::string(metric) != "run_wall_s") n.band = std::max(n.band, b);  // the verdicts' metrics
  }
  if (const double k = records::kernelBandOfRuns(kernel); std::isfinite(k)) n.bands["host_kernel"] = k;
  n.source = source;
  n.measured_at = utcNowIso();
  if (auto m = records::runMachine(repeats.front())) n.machine = *m;
  return n;
}

}  // namespace wb::compare
