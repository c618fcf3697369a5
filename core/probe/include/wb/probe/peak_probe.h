#pragma once
// This machine's attainable peak, measured: a matrix multiply and a convolution per precision
// the machine runs natively (CPU: fp32, and bf16 where the CPU has AVX-512 BF16 or AMX; CUDA:
// fp32, TF32, bf16 and fp16), each repeated in timed windows of about `seconds` / 4 until two
// consecutive windows agree within 3 % (or 3 x `seconds` have passed), so the rate is the
// steady one. FLOPs per call are counted by wb::model's counter (a multiply-add = 2 FLOPs).
// The record, its storage and the datasheet table are wb::records' (wb/records/peak_store.h); nothing
// is written here. CPU threads: all logical cores, as a run with train.threads = 0 takes them.
// Errors: Cancelled when `stop` is set; Internal when a kernel fails.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "wb/common/result.h"
#include "wb/records/peak_store.h"

namespace wb::probe {

struct PeakProbeOptions {
  double seconds = 1.0;  // per kernel and precision, about
  bool cuda = true;      // also each GPU measured (the first one) when CUDA is available
  std::function<void(const std::string&)> progress;  // one line per kernel (may be null)
  const std::atomic<bool>* stop = nullptr;
};

Result<records::PeakResult> measurePeak(const PeakProbeOptions& options);

// The names of this machine's CUDA devices (empty without CUDA): part of the peak's key.
std::vector<std::string> machineGpus();
// The stored peak of this machine (records::loadPeak with this machine's id and GPUs).
std::optional<records::PeakResult> storedPeak();

}  // namespace wb::probe
