#pragma once
// This machine's attainable peak, measured (the record; the measuring is wb::probe::measurePeak in
// core/probe), the vendors' datasheet peaks of GPUs, and which of them a run is measured against.
// No LibTorch: the window and the report read them. GFLOP/s count a multiply and an add as two.
//
// Storage: one JSON file per machine, <probesDir()>/peak-<key>.json, where key hashes the host
// name, CPU model and core count (and the GPU names on a GPU machine), beside the worker probes.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"
#include "wb/proto/flops_record.h"
#include "wb/records/host.h"
#include "wb/render/table.h"

namespace wb::records {

// One kernel timed at one precision until its rate was steady.
struct PeakKernel {
  std::string kernel;      // "matmul" | "conv"
  std::string precision;   // "fp32" | "bf16" | "tf32" | "fp16"
  std::string shape;       // "2048 x 2048 x 2048"
  double flops_per_call = 0;
  int64_t calls = 0;       // timed calls (after the warm-up)
  double seconds = 0;      // their wall time
  double gflop_per_s = 0;  // calls x flops_per_call / seconds / 1e9
  double spread = 0;       // (fastest - slowest) / fastest of the last timed windows: steady when small
};

// A precision that was not measured, and why ("no AVX-512 BF16 or AMX: bf16 is emulated here").
struct PeakSkipped {
  std::string precision;
  std::string why;
};

struct PeakDevice {
  std::string device;      // "cpu" | "cuda:0"
  std::string name;        // the CPU model or the GPU's name
  int threads = 0;         // CPU: the intra-op threads used (a run's default: all logical cores)
  std::vector<PeakKernel> kernels;
  std::vector<PeakSkipped> skipped;
  // The best measured rate of `kernel` at `precision`; nullptr when not measured.
  const PeakKernel* find(const std::string& kernel, const std::string& precision) const;
  // The attainable peak at `precision`: the fastest kernel measured at it, whichever it is (on a
  // CPU oneDNN's convolutions reach the FMA roof where the BLAS matrix product may not);
  // nullptr when nothing was measured at it.
  const PeakKernel* best(const std::string& precision) const;
};

struct PeakResult {
  std::string key;           // peakKey() of the machine
  std::string measured_at;   // UTC, ISO 8601
  std::string host, cpu;
  int cores = 0;
  std::vector<std::string> gpus;  // the GPU names (part of the key)
  std::string libtorch;
  double total_s = 0;
  double other_cores = 0;    // the most cores other processes used while measuring
  std::vector<PeakDevice> devices;  // "cpu" first, then each GPU measured
  const PeakDevice* device(const std::string& device) const;
  bool contended() const;
};

// The key of a machine for the peak: host, CPU model, logical cores and GPU names.
std::string peakKey(const MachineId& machine, const std::vector<std::string>& gpus);
std::filesystem::path peakPath(const std::string& key, const std::filesystem::path& dir = probesDir());

nlohmann::json peakJson(const PeakResult& result);
Result<PeakResult> peakFromJson(const nlohmann::json& doc);
// Writes <dir>/peak-<key>.json atomically. Errors name the file.
Status savePeak(const PeakResult& result, const std::filesystem::path& dir = probesDir());
// The stored peak of this machine; nullopt when none, unreadable or of another machine.
std::optional<PeakResult> loadPeak(const MachineId& machine, const std::vector<std::string>& gpus,
                                   const std::filesystem::path& dir = probesDir());

// ---- datasheet peaks --------------------------------------------------------------------

// One GPU's dense (not sparse) tensor-core and FP32 peaks, in TFLOP/s, with where they come from.
// 0 where the GPU has no such mode.
struct DatasheetEntry {
  std::string match;    // a substring of the CUDA device name, e.g. "H100 SXM" (longest match wins)
  std::string gpu;      // "NVIDIA H100 SXM5"
  double fp32 = 0, tf32 = 0, bf16 = 0, fp16 = 0;
  std::string source;   // the document the figures are from
};
const std::vector<DatasheetEntry>& datasheetTable();
// The entry for a CUDA device name; nullptr for a GPU not in the table.
const DatasheetEntry* datasheetFor(const std::string& gpuName);
// The dense peak of that entry at a precision ("fp32" | "tf32" | "bf16" | "fp16"), TFLOP/s; 0 when none.
double datasheetTflops(const DatasheetEntry& entry, const std::string& precision);

// ---- which peak a run is measured against ------------------------------------------------

// The peak precision of a run precision: "32-true" -> "fp32" ("tf32" on CUDA, where cuDNN runs
// fp32 convolutions as TF32 by default), "bf16-mixed" -> "bf16", "16-mixed" -> "fp16".
std::string peakPrecision(const std::string& runPrecision, bool cuda);

// The measured and datasheet peaks a run on `device` (its GPU named gpuName) at runPrecision is
// set against, for `devices` devices of that kind (GPUs: each its own peak; CPU processes share
// the one CPU). Fills peak / no_peak and, on a GPU, datasheet / no_datasheet of `figures`.
void setPeaks(proto::FlopsFigures& figures, const PeakResult* peak, const std::string& device,
              const std::string& gpuName, const std::string& runPrecision, int devices);

// Puts the stored peak into a capabilities document as "peak" (peakJson plus "date"); nothing
// for nullopt except {"measured": false, "how": "workbench-cli probe peak"}.
void attachPeak(nlohmann::json& capabilities, const std::optional<PeakResult>& result);

// Columns: device, kernel, precision, shape, GFLOP/s, spread, calls; notes: what was skipped and
// why, the datasheet peak of each GPU (or that it is not in the table), the convention.
render::Table peakTable(const PeakResult& result);

}  // namespace wb::records
