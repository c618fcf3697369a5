#include "wb/common/speedups.h"

#include <algorithm>

#include "wb/common/choices.h"

namespace wb {

namespace {
std::string onOff(bool on) { return on ? "on" : "off"; }
}  // namespace

const std::vector<Speedup>& speedupTable() {
  namespace k = speedup;
  static const std::vector<Speedup> v = {
      {k::kWorkers, "Loader workers", "speedups.workers", Availability::Always, "",
       "Threads decode and augment batches ahead of training; 0 loads inside the training loop.", "",
       [](Config& c) { c.speedups.workers = 0; },
       [](Config& t, const Config& f) { t.speedups.workers = f.speedups.workers; },
       [](const Config& c) { return "workers " + std::to_string(c.speedups.workers); }},
      {k::kPinMemory, "Pin memory", "speedups.pin_memory", Availability::NeedsCuda, "CUDA",
       "Page-locked staging buffers, so host-to-GPU copies overlap compute.",
       "copies stay in pageable memory (no effect on CPU)",
       [](Config& c) { c.speedups.pin_memory = false; },
       [](Config& t, const Config& f) { t.speedups.pin_memory = f.speedups.pin_memory; },
       [](const Config& c) { return "pin memory " + onOff(c.speedups.pin_memory); }},
      {k::kDevices, "Devices", "speedups.devices", Availability::Always, "",
       "Data-parallel ranks: one per GPU (NCCL), or CPU processes (Gloo) without one.", "",
       [](Config& c) { c.speedups.devices = 1; },
       [](Config& t, const Config& f) { t.speedups.devices = f.speedups.devices; },
       [](const Config& c) { return "devices " + std::to_string(c.speedups.devices); }},
      {k::kPrecision, "Precision", "speedups.precision", Availability::PerChoice, "CUDA for 16-mixed",
       "Autocast to bf16 (CPU or GPU) or fp16 with dynamic loss scaling (GPU).", "",
       [](Config& c) { c.speedups.precision = choice::kFp32; },
       [](Config& t, const Config& f) { t.speedups.precision = f.speedups.precision; },
       [](const Config& c) { return "precision " + c.speedups.precision; }},
      {k::kEarlyStopping, "Early stopping", "speedups.early_stopping.patience", Availability::Always, "",
       "Stop once the monitored value has not improved for this many evaluations.", "",
       [](Config& c) { c.speedups.early_stopping.patience = 0; },
       [](Config& t, const Config& f) { t.speedups.early_stopping = f.speedups.early_stopping; },
       [](const Config& c) { return "patience " + std::to_string(c.speedups.early_stopping.patience); }},
      {k::kSharding, "Sharding", "speedups.sharding", Availability::NeedsDevices, "devices > 1",
       "Splits optimiser state (and gradients) across the ranks to save memory.", "",
       [](Config& c) { c.speedups.sharding = "off"; },
       [](Config& t, const Config& f) {  // and the devices it needs
         t.speedups.sharding = f.speedups.sharding;
         t.speedups.devices = std::max(t.speedups.devices, f.speedups.devices);
       },
       [](const Config& c) { return "sharding " + c.speedups.sharding + " on " + std::to_string(c.speedups.devices) + " devices"; }},
      {k::kInferenceEval, "Inference-mode evaluation", "speedups.inference_eval", Availability::Always, "",
       "Evaluate under InferenceMode with a larger batch instead of with autograd on.", "",
       [](Config& c) { c.speedups.inference_eval = false; },
       [](Config& t, const Config& f) { t.speedups.inference_eval = f.speedups.inference_eval; },
       [](const Config& c) { return "inference-mode eval " + onOff(c.speedups.inference_eval); }},
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
