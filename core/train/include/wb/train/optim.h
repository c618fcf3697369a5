#pragma once
// Optimisers (SGD with momentum / nesterov / weight decay, Adam, AdamW, Adadelta) and LR
// schedules (constant, step, cosine, one-cycle, with linear warm-up).
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "wb/common/config.h"
#include "wb/common/result.h"

namespace wb::train {

// Builds the optimiser over params. Errors (InvalidConfig) name the optim.* field.
Result<std::unique_ptr<torch::optim::Optimizer>> makeOptimizer(const OptimConfig& config,
                                                               std::vector<torch::Tensor> params);

// Sets lr on every param group.
void setLearningRate(torch::optim::Optimizer& optimizer, double lr);

// lr as a pure function of the global optimiser step (0-based), so resume is exact.
class LrSchedule {
 public:
  LrSchedule(const OptimConfig& config, int64_t total_steps, int64_t steps_per_epoch);
  double lrAt(int64_t step) const;

 private:
  OptimConfig config_;
  int64_t total_steps_;
  int64_t steps_per_epoch_;
};

}  // namespace wb::train
