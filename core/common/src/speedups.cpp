#include "wb/common/speedups.h"

#include <algorithm>

#include "wb/common/choices.h"
#include "speedups_rules.h"

namespace wb {

namespace {
namespace k = speedup;
using rules::onOff;

// The recipe's seven: their values here and their words live in speedups_rules.cpp.
Speedup workers() {
  Speedup s{k::kWorkers, "Loader workers", "speedups.workers", Availability::Always, "",
            "Threads decode and augment batches ahead of training; 0 loads inside the training loop.", "",
            {Math::Keeps, MathCheck::Steps,
             "the loader is ordered and each sample has its own augmentation seed: the batches are those of 0 "
             "workers"},
            Timing::Segments,
            [](Config& c) { c.speedups.workers = 0; },
            [](Config& t, const Config& f) { t.speedups.workers = f.speedups.workers; },
            [](const Config& c) { return "workers " + std::to_string(c.speedups.workers); }};
  rules::describeWorkers(s);
  return s;
}

Speedup pinMemory() {
  Speedup s{k::kPinMemory, "Pin memory", "speedups.pin_memory", Availability::NeedsCuda, "CUDA",
            "Page-locked staging buffers, so host-to-GPU copies overlap compute.",
            "copies stay in pageable memory (no effect on CPU)",
            {Math::Keeps, MathCheck::Steps, "the same bytes reach the device, only sooner"}, Timing::Segments,
            [](Config& c) { c.speedups.pin_memory = false; },
            [](Config& t, const Config& f) { t.speedups.pin_memory = f.speedups.pin_memory; },
            [](const Config& c) { return "pin memory " + onOff(c.speedups.pin_memory); }};
  rules::describePinMemory(s);
  return s;
}

Speedup devices() {
  Speedup s{k::kDevices, "Devices", "speedups.devices", Availability::Always, "",
            "Data-parallel ranks: one per GPU (NCCL), or CPU processes (Gloo) without one.", "",
            {Math::Changes, MathCheck::Ranks, "the global batch is batch_size x devices: fewer, larger optimiser steps"},
            Timing::Trials,
            [](Config& c) { c.speedups.devices = 1; },
            [](Config& t, const Config& f) { t.speedups.devices = f.speedups.devices; },
            [](const Config& c) { return "devices " + std::to_string(c.speedups.devices); }};
  rules::describeDevices(s);
  return s;
}

Speedup precision() {
  Speedup s{k::kPrecision, "Precision", "speedups.precision", Availability::PerChoice, "CUDA for 16-mixed",
            "Autocast to bf16 (CPU or GPU) or fp16 with dynamic loss scaling (GPU).", "",
            {Math::Changes, MathCheck::Steps, "bf16 and fp16 round activations and gradients: other losses from the first step"},
            Timing::Segments,
            [](Config& c) { c.speedups.precision = choice::kFp32; },
            [](Config& t, const Config& f) { t.speedups.precision = f.speedups.precision; },
            [](const Config& c) { return "precision " + c.speedups.precision; }};
  rules::describePrecision(s);
  return s;
}

Speedup earlyStopping() {
  Speedup s{k::kEarlyStopping, "Early stopping", "speedups.early_stopping.patience", Availability::Always, "",
            "Stop once the monitored value has not improved for this many evaluations.", "",
            {Math::Changes, MathCheck::Stopping, "it ends the run at another point: other samples and another final accuracy"},
            Timing::Replay,
            [](Config& c) { c.speedups.early_stopping.patience = 0; },
            [](Config& t, const Config& f) { t.speedups.early_stopping = f.speedups.early_stopping; },
            [](const Config& c) { return "patience " + std::to_string(c.speedups.early_stopping.patience); }};
  rules::describeEarlyStopping(s);
  return s;
}

Speedup sharding() {
  Speedup s{k::kSharding, "Sharding", "speedups.sharding", Availability::NeedsDevices, "devices > 1",
            "Splits optimiser state (and gradients) across the ranks to save memory.", "",
            {Math::Keeps, MathCheck::Ranks,
             "the same updates as plain data parallel on as many devices, the optimiser state split across the ranks"},
            Timing::Trials,
            [](Config& c) { c.speedups.sharding = "off"; },
            [](Config& t, const Config& f) {  // and the devices it needs
              t.speedups.sharding = f.speedups.sharding;
              t.speedups.devices = std::max(t.speedups.devices, f.speedups.devices);
            },
            [](const Config& c) {
              return "sharding " + c.speedups.sharding + " on " + std::to_string(c.speedups.devices) + " devices";
            }};
  rules::describeSharding(s);
  return s;
}

Speedup inferenceEval() {
  Speedup s{k::kInferenceEval, "Inference-mode eval", "speedups.inference_eval", Availability::Always, "",
            "Evaluate under InferenceMode with a larger batch instead of with autograd on.", "",
            {Math::Keeps, MathCheck::Steps,
             "evaluation only: the training steps are untouched and the evaluation computes the same loss"},
            Timing::Evaluation,
            [](Config& c) { c.speedups.inference_eval = false; },
            [](Config& t, const Config& f) { t.speedups.inference_eval = f.speedups.inference_eval; },
            [](const Config& c) { return "inference-mode eval " + onOff(c.speedups.inference_eval); }};
  rules::describeInferenceEval(s);
  return s;
}

}  // namespace

const std::vector<Speedup>& speedupTable() {
  static const std::vector<Speedup> v = [] {
    std::vector<Speedup> t{workers(), pinMemory(), devices(), precision(), earlyStopping(), sharding(), inferenceEval()};
    for (Speedup& lever : rules::levers()) t.push_back(lever);
    return t;
  }();
  return v;
}

const char* mathWords(Math m) { return m == Math::Keeps ? "keeps the math" : "changes the math"; }

std::string withoutWhatItNeeds(const Speedup& s) {
  return s.availability == Availability::NeedsCuda ? needsCuda(s.without) : std::string();
}

std::string noteHere(const Speedup& s, const Here& here) {
  if (s.note) return s.note(here);
  return s.availability != Availability::NeedsCuda || here.cuda ? s.help : withoutWhatItNeeds(s);
}

std::string stepWords(const Speedup& s, const Config& from, const Config& to, const Here& here) {
  return s.step ? s.step(from, to, here) : s.setting(to);
}

std::string runName(const Speedup& s, const Config& c) { return s.name ? s.name(c) : s.setting(c); }

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

std::string leadField(const std::string& path) {
  for (const Speedup& s : speedupTable())
    for (const Follows& f : s.control.follows)
      if (path == f.path || path == f.from) return f.from;
  return {};
}

}  // namespace wb
