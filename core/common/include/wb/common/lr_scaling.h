#pragma once
// optim.lr_scaling: the learning rate for a global batch R times the one optim.lr was tuned for:
// R = devices × train.batch_size / optim.lr_base_batch (train.batch_size is per rank; a base of
// 0 means train.batch_size, so R = devices: what `ladder`'s devices step scales for; `tune batch`
// sets the base when it changes the batch).
//   none:   optim.lr as given.
//   linear: optim.lr × R (Goyal et al. 2017, "Accurate, Large Minibatch SGD").
//   sqrt:   optim.lr × sqrt(R) (Krizhevsky 2014; often better for Adam).
// When the factor is above 1 the run warms up to it (Goyal et al.'s gradual warm-up): the
// factor grows linearly from 1 to its value over the first W = max(1, round(
// optim.lr_scaling_warmup × total steps)) optimiser steps, then stays; the schedule's own lr is
// multiplied by it. One device (factor 1) changes nothing. Pure functions, values only: the
// trainer's schedule (core/train), the comparison and the advisor (core/report) share them.
#include <cstdint>
#include <string>

#include "wb/common/config.h"

namespace wb {

struct LrScaling {
  std::string mode = "none";   // none | linear | sqrt
  int devices = 1;             // ranks whose batches make one global batch
  double batch_ratio = 1;      // train.batch_size / optim.lr_base_batch (1 when no base is set)
  double base_lr = 0;          // optim.lr
  double factor = 1;           // 1, R, or sqrt(R) (R = devices × batch_ratio)
  double effective_lr = 0;     // base_lr × factor (the peak of the schedule after warm-up)
  int64_t warmup_steps = 0;    // 0 when factor is 1
  // For people: "optim.lr 0.01 × 2 (linear scaling for 2 devices) = 0.02, reached by a linear
  // warm-up over the first 3 of 62 steps".
  std::string note;
};

// total_steps < 1 counts as 1 (the report layer, which knows no step count, passes 0: then
// warmup_steps is the floor of 1 and the note leaves the step count out). batch_size: the run's
// train.batch_size (0: unknown, no batch ratio).
LrScaling lrScaling(const OptimConfig& optim, int devices, int64_t total_steps, int batch_size = 0);

// The multiplier at optimiser step `step` (0-based): 1 + (factor − 1) × min(1, (step + 1) / W).
double lrScalingFactorAt(const LrScaling& scaling, int64_t step);

// A short label for tables: "0.02 (linear ×2)", "0.01" when nothing is scaled.
std::string lrScalingLabel(const LrScaling& scaling);

}  // namespace wb
