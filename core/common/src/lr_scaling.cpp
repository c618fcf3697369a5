#include "wb/common/lr_scaling.h"

#include "wb/common/format.h"

#include <algorithm>
#include <cmath>

namespace wb {
LrScaling lrScaling(const OptimConfig& optim, int devices, int64_t total_steps) {
  LrScaling s;
  s.mode = optim.lr_scaling;
  s.devices = std::max(1, devices);
  s.base_lr = optim.lr;
  if (s.mode == "linear") s.factor = static_cast<double>(s.devices);
  else if (s.mode == "sqrt") s.factor = std::sqrt(static_cast<double>(s.devices));
  s.effective_lr = s.base_lr * s.factor;
  const int64_t total = std::max<int64_t>(1, total_steps);
  if (s.factor > 1.0)
    s.warmup_steps = std::max<int64_t>(1, std::llround(optim.lr_scaling_warmup * static_cast<double>(total)));
  if (s.mode == "none") {
    s.note = "optim.lr " + shortNumber(s.base_lr) + " as given (optim.lr_scaling none" +
             (s.devices > 1 ? ": the global batch is " + std::to_string(s.devices) + "× the one it was tuned for" : std::string()) + ")";
  } else if (s.factor == 1.0) {
    s.note = "optim.lr " + shortNumber(s.base_lr) + ": " + s.mode + " scaling for 1 device changes nothing";
  } else {
    s.note = "optim.lr " + shortNumber(s.base_lr) + " × " + shortNumber(s.factor) + " (" + s.mode + " scaling for " +
             std::to_string(s.devices) + " devices: the global batch is " + std::to_string(s.devices) + "× larger) = " +
             shortNumber(s.effective_lr) + ", reached by a linear warm-up over the first " + std::to_string(s.warmup_steps) +
             (total_steps > 0 ? " of " + std::to_string(total) : std::string()) + " optimiser steps";
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
