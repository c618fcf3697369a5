#include "wb/common/lr_scaling.h"

#include "wb/common/format.h"

#include <algorithm>
#include <cmath>

namespace wb {
namespace {

// "the global batch is 2× larger" / "... 2 devices × 128/64 per rank: 4× larger".
std::string globalBatchWords(const LrScaling& s) {
  const double r = s.devices * s.batch_ratio;
  if (s.batch_ratio == 1.0) return std::to_string(s.devices) + " devices: the global batch is " + std::to_string(s.devices) + "× larger";
  return std::to_string(s.devices) + " device(s) and train.batch_size / optim.lr_base_batch = " + shortNumber(s.batch_ratio) +
         ": the global batch is " + shortNumber(r) + "× the one optim.lr was tuned for";
}

}  // namespace

LrScaling lrScaling(const OptimConfig& optim, int devices, int64_t total_steps, int batch_size) {
  LrScaling s;
  s.mode = optim.lr_scaling;
  s.devices = std::max(1, devices);
  s.base_lr = optim.lr;
  if (optim.lr_base_batch > 0 && batch_size > 0) s.batch_ratio = static_cast<double>(batch_size) / optim.lr_base_batch;
  const double r = s.devices * s.batch_ratio;
  if (s.mode == "linear") s.factor = r;
  else if (s.mode == "sqrt") s.factor = std::sqrt(r);
  s.effective_lr = s.base_lr * s.factor;
  const int64_t total = std::max<int64_t>(1, total_steps);
  if (s.factor > 1.0)
    s.warmup_steps = std::max<int64_t>(1, std::llround(optim.lr_scaling_warmup * static_cast<double>(total)));
  if (s.mode == "none") {
    s.note = "optim.lr " + shortNumber(s.base_lr) + " as given (optim.lr_scaling none" +
             (s.devices > 1 ? ": the global batch is " + std::to_string(s.devices) + "× the one it was tuned for" : std::string()) + ")";
  } else if (s.factor == 1.0) {
    s.note = "optim.lr " + shortNumber(s.base_lr) + ": " + s.mode + (s.batch_ratio == 1.0 ? " scaling for 1 device changes nothing" : " scaling for the batch it was tuned for changes nothing");
  } else {
    s.note = "optim.lr " + shortNumber(s.base_lr) + " × " + shortNumber(s.factor) + " (" + s.mode + " scaling for " +
             globalBatchWords(s) + ") = " + shortNumber(s.effective_lr) +
             (s.warmup_steps > 0 ? ", reached by a linear warm-up over the first " + std::to_string(s.warmup_steps) +
                                       (total_steps > 0 ? " of " + std::to_string(total) : std::string()) + " optimiser steps"
                                 : std::string());
  }
  return s;
}

double lrScalingFactorAt(const LrScaling& s, int64_t step) {
  if (s.factor == 1.0 || s.warmup_steps <= 0) return s.factor;
  const double ramp = std::min(1.0, static_cast<double>(std::max<int64_t>(0, step) + 1) / static_cast<double>(s.warmup_steps));
  return 1.0 + (s.factor - 1.0) * ramp;
}

std::string lrScalingLabel(const LrScaling& s) {
  if (s.factor == 1.0) return shortNumber(s.effective_lr);
  return shortNumber(s.effective_lr) + " (" + s.mode + " \u00d7" + shortNumber(s.factor) + ")";
}

}  // namespace wb
