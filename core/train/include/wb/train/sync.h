#pragma once
// The trainer's view of multi-rank training: DDP gradient averaging, or ZeRO-1/2 sharding, on
// top of wb::dist. makeGradSync returns null for a single process.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/model/model.h"

namespace wb::dist {
class Communicator;
}

namespace wb::train {

class GradSync {
 public:
  virtual ~GradSync() = default;
  // The optimiser to step (for ZeRO: one that steps this rank's shard and gathers parameters).
  virtual Result<std::unique_ptr<torch::optim::Optimizer>> makeOptimizer(const OptimConfig& config) = 0;
  // Before each forward: every rank takes rank 0's buffers (BatchNorm running statistics), as
  // PyTorch's DDP does with broadcast_buffers=True, so evaluation and checkpoints agree. No-op
  // for models without floating-point buffers.
  virtual void syncBuffers() = 0;
  virtual void prepareBackward() = 0;
  // Waits for the gradient buckets; grads hold the mean over ranks afterwards.
  virtual void finishBackward() = 0;
  virtual std::string consolidatedOptimizerState(torch::optim::Optimizer& optimizer) = 0;
  virtual Status loadOptimizerState(torch::optim::Optimizer& optimizer, const std::string& bytes) = 0;
  // In-place sum across ranks of a few host scalars (metrics).
  virtual void allReduceSum(double* values, int n) = 0;
  virtual nlohmann::json shardingStatus() const = 0;  // {requested, active, note, ...}
  virtual nlohmann::json describe() const = 0;        // backend, buckets, optimiser bytes per rank...
  virtual nlohmann::json stats() = 0;                 // per log interval: comm ms, overlap share, bytes
};

Result<std::unique_ptr<GradSync>> makeGradSync(const Config& config, dist::Communicator* comm,
                                               model::Model& model, const torch::Device& device);

}  // namespace wb::train
