#include "wb/report/noise.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "wb/common/paths.h"
#include "wb/proto/fields.h"
#include "wb/proto/rundir.h"
#include "wb/report/compare.h"
#include "wb/stats/stats.h"
#include "wb/render/table.h"

namespace wb::report {
using nlohmann::json;

namespace {

std::string percent(double band) { return fmtFixed(band * 100.0, 0) + " %"; }

// A finished run measured alone: what a repeat may contribute to the spread.
bool cleanRepeat(const RunRecord& run, const RunMetrics& m) {
  return (run.status == "ok" || run.status == "early-stopped") && !m.contention.contended;
}

}  // namespace

double HostNoise::bandFor(const std::string& metric) const {
  auto it = bands.find(metric);
  return it != bands.end() && std::isfinite(it->second) ? it->second : band;
}

double HostNoise::hostKernelBand() const {
  auto it = bands.find("host_kernel");
  return measured && it != bands.end() && std::isfinite(it->second) ? it->second : stats::kAssumedKernelBand;
}

double kernelBandOfRuns(const std::vector<std::pair<double, double>>& beforeAfterMs) {
  std::vector<double> changes;
  for (const auto& [before, after] : beforeAfterMs)
    if (before > 0 && after > 0) changes.push_back(std::log(after / before));
  if (changes.size() < 2) return std::nan("");
  double mean = 0, ss = 0;
  for (double c : changes) mean += c / double(changes.size());
  for (double c : changes) ss += (c - mean) * (c - mean);
  // The spread around 0, not the mean: a host that drifts one way in every run is still a change.
  const double sigma = std::sqrt((ss + changes.size() * mean * mean) / double(changes.size() - 1));
  return std::max(kMinKernelBand, std::expm1(kKernelAlarmZ * sigma));
}

std::string experimentKey(const json& config) {
  json c = config;
  if (c.is_object()) {
    for (const char* f : {"name", "seed", "speedups"}) c.erase(f);
  }
  return storeKey(c);
}

WB_FIELDS(AccuracySpread) {
  f("v", proto::derived(1)), f("kind", proto::derived(std::string("accuracy-spread")));
  f("sd_pp", e.sd_pp), f("runs", e.runs), f("source", e.source), f("measured_at", e.measured_at);
}

Status saveAccuracySpread(const json& config, const AccuracySpread& s, const std::filesystem::path& dir) {
  json doc = json::object();
  proto::fieldsToJson(s, doc);
  return writeStored(dir, "accuracy-" + experimentKey(config) + ".json", doc);
}

std::optional<AccuracySpread> loadAccuracySpread(const json& config, const std::filesystem::path& dir) {
  const auto doc = readStored(dir / ("accuracy-" + experimentKey(config) + ".json"));
  if (!doc || doc->value("kind", std::string()) != "accuracy-spread" || !(*doc)["sd_pp"].is_number()) return std::nullopt;
  const auto s = proto::readAs<AccuracySpread>(*doc);
  if (!(std::isfinite(s.sd_pp) && s.sd_pp >= 0)) return std::nullopt;
  return s;
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

std::filesystem::path noiseDir() {
  if (const char* env = std::getenv("WB_NOISE_DIR"); env && *env) return env;
  return defaultRunsRoot().parent_path() / "noise";
}

std::string noiseKey(const MachineId& m) { return storeKey(machineIdentity(m)); }

WB_FIELDS(HostNoise) {
  f("v", proto::derived(1)), f("kind", proto::derived(std::string("host-noise"))), f("key", proto::derived(noiseKey(e.machine)));
  f("host", proto::group([&](auto&& g) { g("name", e.machine.host), g("cpu", e.machine.cpu), g("cores", e.machine.cores); }));
  f("band", e.band), f("bands", e.bands), f("runs", e.runs), f("source", e.source), f("measured_at", e.measured_at);
}

json noiseJson(const HostNoise& n) {
  json doc = json::object();
  proto::fieldsToJson(n, doc);
  return doc;
}

Result<HostNoise> noiseFromJson(const json& doc) {
  if (!doc.is_object() || doc.value("kind", std::string()) != "host-noise" || !doc.contains("band") ||
      !doc["band"].is_number())
    return makeError(Errc::InvalidConfig, "not a host-noise record (kind \"host-noise\" with a band)");
  HostNoise n = proto::readAs<HostNoise>(doc);
  if (!(std::isfinite(n.band) && n.band >= 0)) return makeError(Errc::InvalidConfig, "host-noise band must be a number ≥ 0");
  n.measured = true;
  return n;
}

Status saveNoise(const HostNoise& noise, const std::filesystem::path& dir) {
  return writeStored(dir, noiseKey(noise.machine) + ".json", noiseJson(noise));
}

HostNoise loadNoise(const MachineId& machine, const std::filesystem::path& dir) {
  HostNoise assumed;
  assumed.machine = machine;
  assumed.source = "assumed: not measured on this host";
  const auto doc = readStored(dir / (noiseKey(machine) + ".json"));
  if (!doc) return assumed;
  auto n = noiseFromJson(*doc);
  if (!n.ok()) return assumed;
  return std::move(n.value());
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
  if (const double k = kernelBandOfRuns(kernel); std::isfinite(k)) n.bands["host_kernel"] = k;
  n.source = source;
  n.measured_at = utcNowIso();
  if (auto m = runMachine(repeats.front())) n.machine = *m;
  return n;
}

HostNoise noiseOfRunHost(const RunRecord& run) {
  const std::optional<MachineId> machine = runMachine(run);
  return loadNoise(machine ? *machine : thisMachine());
}

std::string noiseMessage(const HostNoise& n) {
  const std::string spread = n.measured ? "runs here vary ±" + percent(n.band) + " from run to run (" + n.source +
                                              (n.measured_at.empty() ? "" : ", " + n.measured_at.substr(0, 10)) + ")"
                                        : "this host's run-to-run noise is not measured: each verdict rests on "
                                          "its own pairs' spread (`workbench-cli noise` measures the host, which "
                                          "steadies verdicts on few pairs)";
  if (!n.measured || !(n.band > 0)) return spread;
  return spread + ": with 3 pairs, effects under " + fmtSpeedup(stats::smallestDetectable(3, n.band)) +
         " cannot be told apart; with 5 pairs, under " + fmtSpeedup(stats::smallestDetectable(5, n.band)) +
         "; with 10, under " + fmtSpeedup(stats::smallestDetectable(10, n.band));
}

}  // namespace wb::report
