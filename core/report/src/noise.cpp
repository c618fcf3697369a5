#include "wb/report/noise.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "wb/common/paths.h"
#include "wb/proto/rundir.h"
#include "wb/report/compare.h"
#include "wb/report/stats.h"
#include "wb/report/table.h"

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

std::filesystem::path noiseDir() {
  if (const char* env = std::getenv("WB_NOISE_DIR"); env && *env) return env;
  return defaultRunsRoot().parent_path() / "noise";
}

std::string noiseKey(const MachineId& m) { return storeKey(machineIdentity(m)); }

json noiseJson(const HostNoise& n) {
  return {{"v", 1},
          {"kind", "host-noise"},
          {"key", noiseKey(n.machine)},
          {"host", {{"name", n.machine.host}, {"cpu", n.machine.cpu}, {"cores", n.machine.cores}}},
          {"band", n.band},
          {"bands", n.bands},
          {"runs", n.runs},
          {"source", n.source},
          {"measured_at", n.measured_at}};
}

Result<HostNoise> noiseFromJson(const json& doc) {
  if (!doc.is_object() || doc.value("kind", std::string()) != "host-noise" || !doc.contains("band") ||
      !doc["band"].is_number())
    return makeError(Errc::InvalidConfig, "not a host-noise record (kind \"host-noise\" with a band)");
  HostNoise n;
  n.band = doc["band"].get<double>();
  if (!(std::isfinite(n.band) && n.band >= 0)) return makeError(Errc::InvalidConfig, "host-noise band must be a number ≥ 0");
  if (const json& b = doc.value("bands", json::object()); b.is_object())
    for (auto it = b.begin(); it != b.end(); ++it)
      if (it->is_number()) n.bands[it.key()] = it->get<double>();
  const json host = doc.value("host", json::object());
  n.machine = {host.value("name", std::string()), host.value("cpu", std::string()), host.value("cores", 0)};
  n.runs = doc.value("runs", 0);
  n.source = doc.value("source", std::string());
  n.measured_at = doc.value("measured_at", std::string());
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
  const std::optional<double> target =
      repeats.empty() ? std::nullopt : computeMetrics(repeats.front(), std::nullopt).best_val_acc;
  for (const auto& run : repeats) {
    const RunMetrics m = computeMetrics(run, target);
    if (!cleanRepeat(run, m)) continue;
    if (m.train_samples_per_s) rates.push_back(*m.train_samples_per_s);
    if (m.time_to_target_s) targets.push_back(*m.time_to_target_s);
    if (m.run_wall_s) walls.push_back(*m.run_wall_s);
  }
  if (rates.size() < 2 && targets.size() < 2) return std::nullopt;
  HostNoise n;
  n.measured = true;
  n.band = 0;
  for (const auto& [metric, values] : {std::pair{"train_samples_per_s", &rates}, {"time_to_target_s", &targets},
                                       {"run_wall_s", &walls}}) {
    const double b = bandOfRepeats(*values);
    if (!std::isfinite(b)) continue;
    n.bands[metric] = b;
    n.runs = std::max(n.runs, static_cast<int>(values->size()));
    if (std::string(metric) != "run_wall_s") n.band = std::max(n.band, b);  // the verdicts' metrics
  }
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
                                        : "runs here are assumed to vary ±" + percent(n.band) +
                                              " from run to run (not measured on this host: `workbench-cli noise` "
                                              "measures it)";
  if (!(n.band > 0)) return spread;
  return spread + ": with 1 run each, effects under " + fmtSpeedup(smallestDetectable(1, n.band)) +
         " cannot be told apart; with 5 pairs, under " + fmtSpeedup(smallestDetectable(5, n.band));
}

}  // namespace wb::report
