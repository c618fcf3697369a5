#pragma once
// The "flops" object of `step` events and of summary.json: how much arithmetic a training step
// does and how close to this machine's peak it runs. One writer (flopsJson, from the trainer) and
// one reader (readFlops, for core/records and the window); old runs have no such object and read
// as absent. GFLOP/s are 1e9 FLOPs per second; a multiply and an add count as two FLOPs.
//
//   {"convention": "...", "per_step": 5.8e7, "per_sample": 9.1e5, "uncounted": "",
//    "achieved_gflop_per_s": 1.7,
//    "peak": {"gflop_per_s": 95.1, "what": "fp32 matmul, measured on this CPU (2 threads) 2026-12-01"},
//    "pct_of_peak": 1.8, "no_peak": "",
//    "datasheet": {"gflop_per_s": 989400, "what": "H200 SXM bf16 dense, NVIDIA H200 datasheet"},
//    "pct_of_datasheet": 0.4, "no_datasheet": "",
//    "compute_only_step_ms": 1.1, "step_ms": 1.9}      <- the last two: summary only
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace wb::proto {

inline constexpr const char* kFlopsKey = "flops";
// The short form of wb::model::kFlopConvention, written with every figure.
inline constexpr const char* kFlopsConventionShort =
    "1 multiply-add = 2 FLOPs; training step = forward + backward = 3 x forward";

struct PeakFigure {
  double gflop_per_s = 0;
  std::string what;  // which kernel and precision, where measured or which datasheet
};

struct FlopsFigures {
  std::string convention = kFlopsConventionShort;
  double per_step = 0;               // training FLOPs of one step, all ranks (the global batch)
  double per_sample = 0;             // per_step / global batch
  std::string uncounted;             // operations the count left out ("" when none)
  double achieved_gflop_per_s = 0;   // per_step x steps / seconds in those training steps
  std::optional<PeakFigure> peak;    // this machine's measured peak at the run's precision
  std::string no_peak;               // why there is none (e.g. no calibration stored yet)
  std::optional<PeakFigure> datasheet;  // GPU only: the vendor's dense peak for this GPU
  std::string no_datasheet;          // GPU only: why there is none (a GPU not in the table)
  std::optional<double> compute_only_step_ms;  // summary: the same step on a batch in memory
  std::optional<double> step_ms;               // summary: the real step, mean over the run

  // achieved / peak in percent; nullopt without that peak.
  std::optional<double> pctOfPeak() const;
  std::optional<double> pctOfDatasheet() const;
  // (step - compute only) / step: the share of a step the data path (loading, copying) costs.
  std::optional<double> dataPathShare() const;
};

nlohmann::json flopsJson(const FlopsFigures& f);
// The "flops" object under `parent` (a step event or a summary); nullopt when absent. Never throws.
std::optional<FlopsFigures> readFlops(const nlohmann::json& parent);

}  // namespace wb::proto
