#pragma once
// The ranks a run trains with, each holding a replica of the model: DDP gradient averaging or
// ZeRO-1/2 sharding on top of wb::parallel::DataParallel, the buffers (BatchNorm statistics) kept
// equal, and the few sums and decisions the ranks must share. One process is a group of one:
// the same DataParallel over Communicator::local() (tested bit-exact against plain training),
// whose collectives are identities, so the trainer has no single-process branches.
//
// Contract: every method is collective on a group of several ranks (call them on every rank in
// the same order); collective failures throw std::runtime_error naming the rank (the worker's
// top level turns them into an `error` event). Thread affinity: the training thread. Borrows
// the model's parameters and buffers and the communicator (must outlive the group).
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/model/model.h"
#include "wb/proto/event_types.h"

namespace wb::parallel {
class Communicator;
}

namespace wb::train {

class ReplicaGroup {
 public:
  virtual ~ReplicaGroup() = default;
  virtual int worldSize() const = 0;
  // The optimiser to step (for ZeRO: one that steps this rank's shard and gathers parameters).
  virtual Result<std::unique_ptr<torch::optim::Optimizer>> makeOptimizer() = 0;
  // Before each forward: every rank takes rank 0's buffers (BatchNorm running statistics), as
  // PyTorch's DDP does with broadcast_buffers=True, so evaluation and checkpoints agree. No-op
  // for a group of one and for models without floating-point buffers.
  virtual void syncBuffers() = 0;
  virtual void prepareBackward() = 0;
  // Waits for the gradient buckets; grads hold the mean over ranks afterwards.
  virtual void finishBackward() = 0;
  // Gradient accumulation: off for every micro-batch but a step's last, whose backward alone
  // reduces the summed gradients (wb::parallel::DataParallel::setGradientSync). Local.
  virtual void setGradientSync(bool on) = 0;
  virtual int64_t gradientReductions() const = 0;  // collectives launched so far
  // The optimiser state as one unsharded optimiser's (checkpoints do not depend on the group).
  virtual std::string consolidatedOptimizerState() = 0;
  virtual Status loadOptimizerState(const std::string& bytes) = 0;
  // In-place sum across ranks of a few host scalars (metrics).
  virtual void allReduceSum(double* values, int n) = 0;
  // Whether the ranks stop now: every rank must stop at the same step, or the next collectives
  // mismatch. A group of one stops at once; several ranks agree every `every`-th iteration
  // (the same on all), one small all-reduce per log interval.
  virtual bool agreeOnStop(bool requested, int64_t iteration, int64_t every) = 0;
  virtual proto::SpeedupStatus shardingStatus() const = 0;  // the start event's speedups.sharding
  virtual nlohmann::json describe() const = 0;        // backend, buckets, optimiser bytes per rank...
  virtual proto::CommPart stats() = 0;                // per log interval: comm ms, overlap share, bytes
};

// comm null (or of world size 1): a group of one process.
Result<std::unique_ptr<ReplicaGroup>> makeReplicaGroup(const Config& config, parallel::Communicator* comm,
                                                       model::Model& model);

}  // namespace wb::train
