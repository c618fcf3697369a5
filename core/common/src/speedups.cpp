#include "wb/common/speedups.h"

#include "wb/common/choices.h"

namespace wb {

const std::vector<Speedup>& speedupTable() {
  namespace k = speedup;
  static const std::vector<Speedup> v = {
      {k::kWorkers, "Loader workers", "speedups.workers", Availability::Always, "",
       "Threads decode and augment batches ahead of training; 0 loads inside the training loop."},
      {k::kPinMemory, "Pin memory", "speedups.pin_memory", Availability::NeedsCuda, "CUDA",
       "Page-locked staging buffers, so host-to-GPU copies overlap compute.",
       "copies stay in pageable memory (no effect on CPU)"},
      {k::kDevices, "Devices", "speedups.devices", Availability::Always, "",
       "Data-parallel ranks: one per GPU (NCCL), or CPU processes (Gloo) without one."},
      {k::kPrecision, "Precision", "speedups.precision", Availability::PerChoice, "CUDA for 16-mixed",
       "Autocast to bf16 (CPU or GPU) or fp16 with dynamic loss scaling (GPU)."},
      {k::kEarlyStopping, "Early stopping", "speedups.early_stopping.patience", Availability::Always, "",
       "Stop once the monitored value has not improved for this many evaluations."},
      {k::kSharding, "Sharding", "speedups.sharding", Availability::NeedsDevices, "devices > 1",
       "Splits optimiser state (and gradients) across the ranks to save memory."},
      {k::kInferenceEval, "Inference-mode evaluation", "speedups.inference_eval", Availability::Always, "",
       "Evaluate under InferenceMode with a larger batch instead of with autograd on."},
  };
  return v;
}

std::string withoutWhatItNeeds(const Speedup& s) {
  return s.availability == Availability::NeedsCuda ? needsCuda(s.without) : std::string();
}

const Speedup* findSpeedup(const std::string& key) {
  for (const Speedup& s : speedupTable())
    if (key == s.key) return &s;
  return nullptr;
}

}  // namespace wb
