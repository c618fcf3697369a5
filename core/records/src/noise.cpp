#include "wb/records/noise.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "wb/common/paths.h"
#include "wb/proto/fields.h"
#include "wb/proto/rundir.h"
#include "wb/stats/stats.h"
#include "wb/render/table.h"

namespace wb::records {
using nlohmann::json;

namespace {

std::string percent(double band) { return fmtFixed(band * 100.0, 0) + " %"; }

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
  const auto doc = readCache(dir / ("accuracy-" + experimentKey(config) + ".json"));
  if (!doc || doc->value("kind", std::string()) != "accuracy-spread" || !(*doc)["sd_pp"].is_number()) return std::nullopt;
  const auto s = proto::readAs<AccuracySpread>(*doc);
  if (!(std::isfinite(s.sd_pp) && s.sd_pp >= 0)) return std::nullopt;
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
  const auto doc = readCache(dir / (noiseKey(machine) + ".json"));
  if (!doc) return assumed;
  auto n = noiseFromJson(*doc);
  if (!n.ok()) return assumed;
  return std::move(n.value());
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

}  // namespace wb::records
