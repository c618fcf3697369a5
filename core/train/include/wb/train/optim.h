#pragma once
// Optimisers (SGD with momentum / nesterov / weight decay, Adam, AdamW, Adadelta) and LR
// schedules (constant, step, cosine, one-cycle, with linear warm-up).
// Thread affinity: an optimiser is stepped from one thread at a time; LrSchedule is immutable.
#include <cstdint>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "wb/common/config.h"
#include "wb/common/lr_scaling.h"
#include "wb/common/result.h"

namespace wb::train {

// Builds the optimiser over params. Errors (InvalidConfig) name the optim.* field; an empty
// params list is an Errc::Model error. optim.momentum and optim.nesterov apply to sgd only.
// Adam and AdamW use torch's default betas and eps; adadelta uses rho 0.9, eps 1e-6 with
// optim.lr as its lr (torch's default for Adadelta is 1.0).
// multiTensor (speedups.fused_optimizer): sgd, adam and adamw step every parameter of a group with
// multi-tensor kernels (at::_foreach_*): the same arithmetic in the same order as LibTorch's loop
// over tensors, the same state (SGDParamState, AdamParamState: checkpoints are interchangeable).
// Adadelta has none: an InvalidConfig error naming speedups.fused_optimizer (validate() says so first).
Result<std::unique_ptr<torch::optim::Optimizer>> makeOptimizer(const OptimConfig& config,
                                                               std::vector<torch::Tensor> params,
                                                               bool multiTensor = false);

// Sets lr on every param group.
void setLearningRate(torch::optim::Optimizer& optimizer, double lr);

// lr as a pure function of the global optimiser step (0-based), so resume is exact.
//   constant: lr.
//   step:     lr * gamma^floor(epoch / step_size), epoch = step / steps_per_epoch.
//   cosine:   linear warm-up lr*(step+1)/W over W = round(warmup_fraction * total) steps, then
//             lr * (1 + cos(pi * (step - W) / (total - W))) / 2, reaching 0 at step = total.
//   onecycle: torch.optim.lr_scheduler.OneCycleLR with max_lr = lr, pct_start =
//             warmup_fraction (0.3 when 0), div_factor 25, final_div_factor 1e4, cosine
//             annealing in both phases (momentum is not cycled).
// Steps past the end keep the last value. total_steps and steps_per_epoch below 1 count as 1.
// optim.lr_scaling multiplies every value by lrScalingFactorAt(scaling(), step): × devices
// (linear) or × sqrt(devices), warmed up from × 1 (wb/common/lr_scaling.h); `devices` is the
// number of ranks whose batches make one optimiser step.
// An unknown schedule name is a broken invariant (validate() rejects it first): throws
// std::invalid_argument.
class LrSchedule {
 public:
  LrSchedule(const OptimConfig& config, int64_t total_steps, int64_t steps_per_epoch, int devices = 1, int batch_size = 0);
  double lrAt(int64_t step) const;
  const LrScaling& scaling() const { return scaling_; }
  // For the start event: mode, devices, base_lr, factor, effective_lr, warmup_steps, note.
  nlohmann::json scalingJson() const;

 private:
  double scheduledAt(int64_t step) const;
  OptimConfig config_;
  int64_t total_steps_;
  int64_t steps_per_epoch_;
  LrScaling scaling_;
};

// ---- Adadelta (LibTorch 1.13 has none) ---------------------------------------------------
// The update rule of torch.optim.Adadelta (maximize=False):
//   g = grad + weight_decay * p
//   square_avg = rho * square_avg + (1 - rho) * g^2
//   delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g
//   acc_delta = rho * acc_delta + (1 - rho) * delta^2
//   p -= lr * delta
// State is created lazily at a param's first step; save()/load() round-trip it (and work
// across processes like LibTorch's own optimisers: states are matched by param order).

struct AdadeltaOptions : public torch::optim::OptimizerCloneableOptions<AdadeltaOptions> {
  AdadeltaOptions(double lr = 1.0);  // NOLINT(implicit): LibTorch's serializer builds it from 0
  TORCH_ARG(double, lr) = 1.0;
  TORCH_ARG(double, rho) = 0.9;
  TORCH_ARG(double, eps) = 1e-6;
  TORCH_ARG(double, weight_decay) = 0.0;

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
  double get_lr() const override;
  void set_lr(const double lr) override;
};

struct AdadeltaParamState : public torch::optim::OptimizerCloneableParamState<AdadeltaParamState> {
  TORCH_ARG(int64_t, step) = 0;
  TORCH_ARG(torch::Tensor, square_avg);
  TORCH_ARG(torch::Tensor, acc_delta);

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

class Adadelta : public torch::optim::Optimizer {
 public:
  explicit Adadelta(std::vector<torch::optim::OptimizerParamGroup> param_groups,
                    AdadeltaOptions defaults = {});
  explicit Adadelta(std::vector<torch::Tensor> params, AdadeltaOptions defaults = {});

  torch::Tensor step(LossClosure closure = nullptr) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
};

}  // namespace wb::train
