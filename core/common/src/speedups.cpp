#include "wb/common/speedups.h"

#include <algorithm>

#include "wb/common/choices.h"

namespace wb {

namespace {
std::string onOff(bool on) { return on ? "on" : "off"; }

bool convNet(const Config& c) { return c.model.name != "mlp"; }  // a TorchScript model may have convolutions
std::string noConvolutions(const Config& c) {
  return convNet(c) ? "" : c.model.name + " has no convolutions: the layout of its weights does not matter";
}

std::string cacheCannotHelp(const Config& c) {
  if (c.data.dataset.rfind("folder:", 0) != 0)
    return "the images of " + c.data.dataset + " are held decoded in memory already: only image folders decode";
  if (c.train.epochs < 2) return "a run of one epoch decodes every image once anyway";
  return "";
}

std::string fusedCannotHelp(const Config& c) {
  return c.optim.name == "adadelta" ? "adadelta has no multi-tensor step here (sgd, adam and adamw have)" : "";
}

std::string accumulationCannotHelp(const Config& c) {
  return c.speedups.devices > 1 ? ""
                                : "on one device accumulation saves no communication: it only makes the effective "
                                  "batch larger, which changes the training rather than speeding it up";
}

}  // namespace

const std::vector<Speedup>& speedupTable() {
  namespace k = speedup;
  static const std::vector<Speedup> v = {
      {k::kWorkers, "Loader workers", "speedups.workers", Availability::Always, "",
       "Threads decode and augment batches ahead of training; 0 loads inside the training loop.", "",
       {Math::Keeps, MathCheck::Steps,
        "the loader is ordered and each sample has its own augmentation seed: the batches are those of 0 "
        "workers"}, Timing::Segments,
       [](Config& c) { c.speedups.workers = 0; },
       [](Config& t, const Config& f) { t.speedups.workers = f.speedups.workers; },
       [](const Config& c) { return "workers " + std::to_string(c.speedups.workers); }},
      {k::kPinMemory, "Pin memory", "speedups.pin_memory", Availability::NeedsCuda, "CUDA",
       "Page-locked staging buffers, so host-to-GPU copies overlap compute.",
       "copies stay in pageable memory (no effect on CPU)",
       {Math::Keeps, MathCheck::Steps, "the same bytes reach the device, only sooner"}, Timing::Segments,
       [](Config& c) { c.speedups.pin_memory = false; },
       [](Config& t, const Config& f) { t.speedups.pin_memory = f.speedups.pin_memory; },
       [](const Config& c) { return "pin memory " + onOff(c.speedups.pin_memory); }},
      {k::kDevices, "Devices", "speedups.devices", Availability::Always, "",
       "Data-parallel ranks: one per GPU (NCCL), or CPU processes (Gloo) without one.", "",
       {Math::Changes, MathCheck::Ranks, "the global batch is batch_size x devices: fewer, larger optimiser steps"}, Timing::Trials,
       [](Config& c) { c.speedups.devices = 1; },
       [](Config& t, const Config& f) { t.speedups.devices = f.speedups.devices; },
       [](const Config& c) { return "devices " + std::to_string(c.speedups.devices); }},
      {k::kPrecision, "Precision", "speedups.precision", Availability::PerChoice, "CUDA for 16-mixed",
       "Autocast to bf16 (CPU or GPU) or fp16 with dynamic loss scaling (GPU).", "",
       {Math::Changes, MathCheck::Steps,
        "bf16 and fp16 round activations and gradients: other losses from the first step"}, Timing::Segments,
       [](Config& c) { c.speedups.precision = choice::kFp32; },
       [](Config& t, const Config& f) { t.speedups.precision = f.speedups.precision; },
       [](const Config& c) { return "precision " + c.speedups.precision; }},
      {k::kEarlyStopping, "Early stopping", "speedups.early_stopping.patience", Availability::Always, "",
       "Stop once the monitored value has not improved for this many evaluations.", "",
       {Math::Changes, MathCheck::Stopping,
        "it ends the run at another point: other samples and another final accuracy"}, Timing::Replay,
       [](Config& c) { c.speedups.early_stopping.patience = 0; },
       [](Config& t, const Config& f) { t.speedups.early_stopping = f.speedups.early_stopping; },
       [](const Config& c) { return "patience " + std::to_string(c.speedups.early_stopping.patience); }},
      {k::kSharding, "Sharding", "speedups.sharding", Availability::NeedsDevices, "devices > 1",
       "Splits optimiser state (and gradients) across the ranks to save memory.", "",
       {Math::Keeps, MathCheck::Ranks,
        "the same updates as plain data parallel on as many devices, the optimiser state split across the "
        "ranks"}, Timing::Trials,
       [](Config& c) { c.speedups.sharding = "off"; },
       [](Config& t, const Config& f) {  // and the devices it needs
         t.speedups.sharding = f.speedups.sharding;
         t.speedups.devices = std::max(t.speedups.devices, f.speedups.devices);
       },
       [](const Config& c) { return "sharding " + c.speedups.sharding + " on " + std::to_string(c.speedups.devices) + " devices"; }},
      {k::kInferenceEval, "Inference-mode evaluation", "speedups.inference_eval", Availability::Always, "",
       "Evaluate under InferenceMode with a larger batch instead of with autograd on.", "",
       {Math::Keeps, MathCheck::Steps,
        "evaluation only: the training steps are untouched and the evaluation computes the same loss"}, Timing::Evaluation,
       [](Config& c) { c.speedups.inference_eval = false; },
       [](Config& t, const Config& f) { t.speedups.inference_eval = f.speedups.inference_eval; },
       [](const Config& c) { return "inference-mode eval " + onOff(c.speedups.inference_eval); }},
      {k::kDecodedCache, "Decoded-sample cache", "speedups.decoded_cache", Availability::Always, "",
       "Decode each image once and keep its pixels (in memory, or a memory-mapped file for data larger than "
       "memory); augmentation stays per sample and epoch.", "",
       {Math::Keeps, MathCheck::Steps, "the same pixels, decoded once; augmentation stays per sample and epoch"}, Timing::Trials,
       [](Config& c) { c.speedups.decoded_cache = "off"; },
       [](Config& t, const Config& f) { t.speedups.decoded_cache = f.speedups.decoded_cache; },
       [](const Config& c) { return "decoded cache " + c.speedups.decoded_cache; }, Control::Choice,
       [](Config& c) { c.speedups.decoded_cache = "memory"; }, cacheCannotHelp},
      {k::kChannelsLast, "Channels-last", "speedups.channels_last", Availability::Always, "",
       "Lays convolution weights and inputs out as NHWC, the layout oneDNN and cuDNN's tensor cores prefer "
       "(it slows some models down; under sharding the inputs only).", "",
       {Math::Keeps, MathCheck::Steps, "another memory layout for the same arithmetic (fp32 sums in another order)"}, Timing::Trials,
       [](Config& c) { c.speedups.channels_last = false; },
       [](Config& t, const Config& f) { t.speedups.channels_last = f.speedups.channels_last; },
       [](const Config& c) { return "channels-last " + onOff(c.speedups.channels_last); }, Control::Toggle,
       [](Config& c) { c.speedups.channels_last = true; }, noConvolutions},
      {k::kFusedOptimizer, "Multi-tensor optimiser step", "speedups.fused_optimizer", Availability::Always, "",
       "Steps every parameter with a few multi-tensor (_foreach) kernels instead of a loop of small ones "
       "(sgd, adam, adamw).", "",
       {Math::Keeps, MathCheck::Steps, "the same update, in a few multi-tensor kernels"}, Timing::Trials,
       [](Config& c) { c.speedups.fused_optimizer = false; },
       [](Config& t, const Config& f) { t.speedups.fused_optimizer = f.speedups.fused_optimizer; },
       [](const Config& c) { return "multi-tensor step " + onOff(c.speedups.fused_optimizer); }, Control::Toggle,
       [](Config& c) { c.speedups.fused_optimizer = true; }, fusedCannotHelp},
      {k::kGradAccumulation, "Gradient accumulation", "speedups.grad_accumulation", Availability::Always, "",
       "Sums the gradients of N micro-batches before one optimiser step and one all-reduce: an effective "
       "batch of N x batch_size per rank.", "",
       {Math::Changes, MathCheck::Steps, "an effective batch N times larger: fewer, larger optimiser steps"}, Timing::Trials,
       [](Config& c) { c.speedups.grad_accumulation = 1; },
       [](Config& t, const Config& f) { t.speedups.grad_accumulation = f.speedups.grad_accumulation; },
       [](const Config& c) { return "accumulate " + std::to_string(c.speedups.grad_accumulation) + " micro-batches"; },
       Control::Count, [](Config& c) { c.speedups.grad_accumulation = 4; }, accumulationCannotHelp},
      {k::kCudnnBenchmark, "cuDNN autotune", "speedups.cudnn_benchmark", Availability::NeedsCuda, "CUDA",
       "Times cuDNN's convolution algorithms on the first batch of each shape and keeps the fastest "
       "(slower when shapes vary).",
       "no cuDNN on the CPU: the setting has no effect",
       {Math::Keeps, MathCheck::Steps,
        "another convolution algorithm for the same arithmetic (fp32 sums in another order)"}, Timing::Trials,
       [](Config& c) { c.speedups.cudnn_benchmark = false; },
       [](Config& t, const Config& f) { t.speedups.cudnn_benchmark = f.speedups.cudnn_benchmark; },
       [](const Config& c) { return "cuDNN autotune " + onOff(c.speedups.cudnn_benchmark); }, Control::Toggle,
       [](Config& c) { c.speedups.cudnn_benchmark = true; }, noConvolutions},
      {k::kTf32, "TF32 matmuls", "speedups.tf32", Availability::NeedsCuda, "CUDA",
       "Lets fp32 matmuls run on TF32 tensor cores (Ampere and later: 10-bit mantissa inputs, fp32 sums); "
       "cuDNN convolutions may already, as LibTorch's default.",
       "CPU matmuls stay fp32: the setting has no effect",
       {Math::Changes, MathCheck::Steps, "matmul inputs rounded to a 10-bit mantissa"}, Timing::Trials,
       [](Config& c) { c.speedups.tf32 = false; },
       [](Config& t, const Config& f) { t.speedups.tf32 = f.speedups.tf32; },
       [](const Config& c) { return "TF32 " + onOff(c.speedups.tf32); }, Control::Toggle,
       [](Config& c) { c.speedups.tf32 = true; }, nullptr},
  };
  return v;
}

const char* mathWords(Math m) { return m == Math::Keeps ? "keeps the math" : "changes the math"; }

std::string withoutWhatItNeeds(const Speedup& s) {
  return s.availability == Availability::NeedsCuda ? needsCuda(s.without) : std::string();
}

bool speedupRequested(const Speedup& s, const Config& c) {
  Config off = c;
  s.off(off);
  return s.setting(off) != s.setting(c);
}

const Speedup* findSpeedup(const std::string& key) {
  for (const Speedup& s : speedupTable())
    if (key == s.key) return &s;
  return nullptr;
}

const Speedup* speedupOfField(const std::string& path) {
  for (const Speedup& s : speedupTable()) {
    const std::string field = std::string("speedups.") + s.key;
    if (path == field || path.rfind(field + ".", 0) == 0) return &s;
  }
  return nullptr;
}

}  // namespace wb
