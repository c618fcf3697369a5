#pragma once
// This host's run-to-run noise: the band every verdict is judged against (wb/stats/stats.h),
// where it comes from, where it is stored, and the sentence that shows it. Values only, except
// the load/save functions (files under noiseDir()).
//
// Storage: one JSON file per machine, <noiseDir()>/<key>.json, key = FNV-1a 64 of host name, CPU
// model and logical cores (like the worker probe's store). Written by `workbench-cli noise`
// (an A/A calibration: the same configuration run repeatedly as whole processes, or the repeats
// of existing runs with --from; wb/compare/noise_of_repeats.h measures them). A host with nothing stored gets kAssumedNoiseBand, said so.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"
#include "wb/records/host.h"
#include "wb/records/run_record.h"

namespace wb::records {

// The band assumed until this host is measured: 2-core shared hosts measured at 1.3-1.4× between
// repeats of one configuration (±15 %).
inline constexpr double kAssumedNoiseBand = 0.15;
// The check's threshold from its measured A/A spread σ of ln(after / before): e^(z·σ) − 1 at a
// 0.1 % false-alarm rate per run (z = 3.29), at least kMinKernelBand.
inline constexpr double kKernelAlarmZ = 3.29;
inline constexpr double kMinKernelBand = 0.03;

struct HostNoise {
  double band = kAssumedNoiseBand;     // ± as a ratio (0.14 = ±14 %), the largest of `bands`
  std::map<std::string, double> bands; // per metric: "train_samples_per_s", "time_to_target_s", "run_wall_s";
                                       // "host_kernel": the host speed check's threshold (hostKernelBand)
  bool measured = false;               // false: assumed (nothing stored for this host)
  int runs = 0;                        // repeats it rests on
  std::string source;                  // "A/A calibration: 6 runs of fashion-mnist-lenet", "assumed …"
  std::string measured_at;             // ISO UTC
  MachineId machine;
  // The band for one metric; the overall band when that metric was not measured.
  double bandFor(const std::string& metric) const;
  // The floor a verdict puts under the spread of few pairs: the metric's measured band, 0 when
  // this host is not measured (the pairs alone carry the noise).
  double floorFor(const std::string& metric) const { return measured ? bandFor(metric) : 0.0; }
  // The host speed check's threshold: its measured one, else stats::kAssumedKernelBand.
  double hostKernelBand() const;
  bool hostKernelMeasured() const { return measured && bands.count("host_kernel") > 0; }
};

// The kernel check's threshold from A/A runs' (before, after) timings (see kKernelAlarmZ); NaN
// with fewer than 2 runs that have both.
double kernelBandOfRuns(const std::vector<std::pair<double, double>>& beforeAfterMs);

// $WB_NOISE_DIR, else "noise" beside the runs root (~/.local/share/speedup-workbench/noise).
std::filesystem::path noiseDir();
std::string noiseKey(const MachineId& machine);
nlohmann::json noiseJson(const HostNoise& noise);
Result<HostNoise> noiseFromJson(const nlohmann::json& doc);
// Writes <dir>/<noiseKey(noise.machine)>.json atomically. Errors name the file.
Status saveNoise(const HostNoise& noise, const std::filesystem::path& dir = noiseDir());
// The stored noise of the machine; the assumed band (measured = false) when none or unreadable.
HostNoise loadNoise(const MachineId& machine, const std::filesystem::path& dir = noiseDir());

// The stored noise of the host `run` ran on (its env's machine; this host when it does not say).
HostNoise noiseOfRunHost(const RunRecord& run);

// How much a run's best accuracy moves by chance (seed to seed), measured on one experiment (its
// config but for name, seed and speedups) by `workbench-cli noise` and stored beside the host
// noise as accuracy-<key>.json. Time to target compares at the reference's best less this.
struct AccuracySpread {
  double sd_pp = 0;            // sd of the best val acc over seeds, percentage points
  int runs = 0;
  std::string source, measured_at;
};
std::string experimentKey(const nlohmann::json& config);
Status saveAccuracySpread(const nlohmann::json& config, const AccuracySpread& spread, const std::filesystem::path& dir = noiseDir());
std::optional<AccuracySpread> loadAccuracySpread(const nlohmann::json& config, const std::filesystem::path& dir = noiseDir());

// "runs here vary ±14 % from run to run (A/A calibration: 6 runs, 2026-12-01): with 1 run each,
// effects under 1.37× cannot be told apart; 3 pairs: 1.44×" — or, unmeasured, "runs here are
// assumed to vary ±15 % … (run `workbench-cli noise` to measure)".
std::string noiseMessage(const HostNoise& noise);

}  // namespace wb::records
