#pragma once
// Data-parallel training over a Communicator: DDP-style bucketed gradient all-reduce that
// overlaps backward, and ZeRO-1/2 sharding of optimiser state (and gradients).
//
// Per training step, on every rank, with the same model and this rank's part of the batch:
//
//   dp->zeroGrad();                          // grads to none
//   auto loss = criterion(model(x), y);      // mean over this rank's samples
//   loss.backward();                         // full buckets start their all-reduce during backward
//   if (auto st = dp->finishGradients(); !st) ...   // wait; grads = mean over ranks
//   if (auto st = dp->step(); !st) ...               // optimiser step (+ ZeRO parameter all-gather)
//   CommStats s = dp->lastStats();           // ms.comm, overlapped share, bytes -> `step` event
//
// Averaging the per-rank mean gradients equals one process training on the global batch
// (batch_size x world_size samples) when every rank's batch has the same size.
//
// How gradients move (like PyTorch's Reducer): parameters are grouped into buckets of about
// `bucket_bytes` in reverse parameter order (the order backward produces them; the first bucket
// is capped at `first_bucket_bytes` so communication starts early). A post hook on each
// parameter's gradient accumulator copies the gradient into its bucket; when a bucket is full
// it is all-reduced asynchronously while backward goes on. Buckets are launched strictly in
// order, so every rank issues the same collectives in the same order even when parameters are
// unused on some rank (those are sent as their current grad, or zeros, at finishGradients).
//
// Memory: the buckets keep one extra copy of the gradients (PyTorch's DDP without
// gradient_as_bucket_view); ZeRO keeps a flat copy of this rank's range (1/world of the
// parameters) for its optimiser to step, and its parameter all-gather briefly needs world x that.
//
// Sharding (ZeRO, as DeepSpeed partitions): the parameters are laid end to end in their order,
// as one flat vector, and cut into `world` equal contiguous ranges (partitionFlat). A tensor may
// be split between ranks. Each rank keeps its range as flat copies (one per tensor piece, in
// the parameters' dtype), and its optimiser (built by `factory` over those pieces) holds state
// for them only: ≈ 1/world of the total whatever the tensor sizes. step() copies the rank's range in, steps it, writes it
// back and all-gathers the updated ranges. This is exact for element-wise optimisers (SGD, Adam,
// AdamW, Adagrad, RMSprop, Adadelta), whose update of an element depends only on that element;
// `factory` must treat all the tensors it gets alike (one param group).
//   zero1: gradients are all-reduced as in DDP (every rank holds all of them).
//   zero2: each rank keeps only the gradients of its range: tensors outside it are released
//          (grad undefined) as soon as they are copied into a bucket; a tensor split between
//          ranks keeps a gradient that is zero outside this rank's part. With NCCL, buckets are
//          reduce-scattered so a rank receives only its range's sums; Gloo has no reduce-scatter,
//          so it all-reduces the buckets and gradientMemorySaved() is false (say so in `start`).
// consolidatedOptimizerState() joins the pieces' states back into one state per tensor (each
// element-wise state tensor concatenated in element order), so checkpoints do not depend on the
// world size or sharding mode.
// Anything that inspects gradients after finishGradients() under zero2 (non-finite check of a
// loss scaler, clipping) sees only this rank's shard: combine its verdict with
// Communicator::allReduce (Max / Sum) so every rank decides the same.
//
// Contract
// - Collective: every rank creates its DataParallel with the same parameter list (same order,
//   shapes) and calls finishGradients()/step()/consolidatedOptimizerState() in the same order.
// - One backward per finishGradients(), or, to accumulate gradients over micro-batches, several
//   backwards with setGradientSync(false) and the last one with it on: the hooks then neither copy
//   nor launch until the last backward, whose gradients (the sums autograd accumulated) are
//   reduced once. zeroGrad() only before the first micro-batch. No double backward through the hooks.
// - Threads: the hooks run on autograd's threads; every method is called from the training thread.
// - Ownership: borrows the Communicator (must outlive this) and shares the parameter tensors
//   (the model keeps owning them). The destructor removes the hooks.
// - Parameters must be contiguous leaves that require grad, on one device, of one dtype.
// - Errors are Errc::Distributed (collectives; message names the rank), Errc::Checkpoint
//   (optimiser state that does not fit), Errc::InvalidConfig (bad options, from `factory`).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "wb/common/result.h"
#include "wb/parallel/communicator.h"

namespace wb::parallel {

enum class Sharding { Off, Zero1, Zero2 };
// "off" | "zero1" | "zero2" (the config's speedups.sharding values).
Result<Sharding> parseSharding(const std::string& name);
const char* shardingName(Sharding sharding);

// Builds an optimiser over the given parameters, e.g.
//   [&](std::vector<torch::Tensor> p) { return wb::train::makeOptimizer(cfg.optim, std::move(p)); }
// Called once per rank for its shard at create(), and again (on throwaway optimisers) when
// optimiser state is consolidated or loaded; it must build the same kind of optimiser each time.
using OptimizerFactory =
    std::function<Result<std::unique_ptr<torch::optim::Optimizer>>(std::vector<torch::Tensor>)>;

struct DataParallelOptions {
  Sharding sharding = Sharding::Off;
  int64_t bucket_bytes = 25LL * 1024 * 1024;     // PyTorch DDP's bucket_cap_mb = 25
  int64_t first_bucket_bytes = 1LL * 1024 * 1024; // PyTorch DDP's first bucket: 1 MB
  bool broadcast_parameters = true;              // create() makes rank 0's values everyone's
  // zero2 without native reduce-scatter (Gloo): lay the buckets out as for NCCL's reduce-scatter
  // (per-rank chunks) and emulate it with an all-reduce, so that path runs on CPU (tests).
  bool emulate_reduce_scatter = false;
};

// Communication of one step (finishGradients + step), for the `step` event.
struct CommStats {
  double comm_ms = 0;      // time spent on communication: launch_ms + wait_ms + gather_ms (ms.comm)
  double launch_ms = 0;    // host time in the hooks during backward: copying into buckets + launching
  // The wait after backward for the gradients. Gloo: host time in finishGradients (launching the
  // rest, waiting, averaging back). NCCL: device time (CUDA events on the compute stream) from the
  // end of backward to the last bucket's completion, i.e. the communication backward did not hide.
  double wait_ms = 0;
  double gather_ms = 0;    // in step(): ZeRO parameter all-gather
  // Share (0..1) of the gradient-communication window [first launch, last completion] that
  // passed before backward ended (overlapShare). Gloo: host times, completion when Gloo marks the
  // work done. NCCL: device times (CUDA events), a launch where the gradients were ready on the
  // GPU, completion where the GPU had finished the collective.
  double overlap = 0;
  int64_t bytes_reduced = 0;    // gradient bytes all-reduced / reduce-scattered (incl. padding)
  int64_t bytes_gathered = 0;   // parameter bytes all-gathered (ZeRO; incl. padding)
  int buckets = 0;
  int buckets_in_backward = 0;  // launched before backward ended
};

// Share (0..1) of the communication window [first_launch, last_done] that passed before
// backward_end; 0 for an empty window. Any one clock (seconds or ms from any origin).
double overlapShare(double first_launch, double backward_end, double last_done);

// One rank's part of one parameter tensor: elements [offset, offset + numel) of it, flattened.
struct ShardPiece {
  size_t param = 0;
  int64_t offset = 0;
  int64_t numel = 0;
};
// ZeRO's partition of tensors with these element counts: laid end to end and cut into
// world_size contiguous ranges of ceil(total / world_size) elements (the last ones shorter or
// empty). Per rank, its pieces in parameter order; every element belongs to exactly one rank.
std::vector<std::vector<ShardPiece>> partitionFlat(const std::vector<int64_t>& numels, int world_size);

// Bytes of the tensors in an optimiser's state (SGD, Adam, AdamW, Adagrad, RMSprop exactly;
// other optimisers by the size of their serialised state).
int64_t optimizerStateBytes(const torch::optim::Optimizer& optimizer);

// An optimiser's state as torch::optim::Optimizer::save writes it into a
// torch::serialize::OutputArchive (the checkpoint's optimizer_state), and back. Loading maps
// states to parameters by position, as LibTorch does; a mismatch is an Errc::Checkpoint error.
std::string saveOptimizerState(torch::optim::Optimizer& optimizer);
Status loadOptimizerState(torch::optim::Optimizer& optimizer, const std::string& bytes);

class DataParallel {
 public:
  // Collective. Broadcasts the parameters from rank 0 (unless disabled), partitions them
  // (sharding on), builds this rank's optimiser with `factory`, lays out the buckets and
  // installs the gradient hooks (only when the communicator has a group: with
  // Communicator::local() it is a thin wrapper around one optimiser).
  static Result<std::unique_ptr<DataParallel>> create(Communicator& comm, std::vector<torch::Tensor> params,
                                                     OptimizerFactory factory,
                                                     const DataParallelOptions& options = {});
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  // After backward: launches buckets not yet launched, waits for all, and leaves every
  // parameter's .grad = the mean over ranks. zero2: only this rank's shard has a .grad.
  Status finishGradients();
  // Optimiser step on this rank's parameters (all of them when sharding is off), then (zero1/2)
  // all-gathers the updated parameters so every rank holds the full model again.
  Status step();
  // Sets every parameter's grad to undefined (PyTorch's zero_grad(set_to_none=True)).
  void zeroGrad();
  // Sets lr on every param group of this rank's optimiser (all ranks must use the same lr).
  void setLearningRate(double lr);

  CommStats lastStats() const;
  // Off: the backwards that follow only accumulate into .grad (no copy, no collective) until it
  // is on again for the last micro-batch of the step (PyTorch DDP's no_sync()).
  void setGradientSync(bool on);
  // Gradient collectives (bucket all-reduces / reduce-scatters) launched since create().
  int64_t gradientReductions() const;
  // Bytes of optimiser state this rank holds (≈ 1/world of the unsharded total under ZeRO).
  int64_t optimizerStateBytes() const;
  // zero2 on a backend with native reduce-scatter (NCCL). False on Gloo and for off/zero1.
  bool gradientMemorySaved() const;
  Sharding sharding() const;
  int numBuckets() const;
  // Elements of params[i] this rank steps and keeps optimiser state for: all of them when
  // sharding is off; its part of the flat partition (possibly 0, or part of the tensor) under ZeRO.
  int64_t ownedNumel(size_t i) const;
  // e.g. "zero2 over gloo, 2 ranks, 3 buckets (cap 25 MB), optimiser state 1.2 MB on this rank;
  //       gradient memory not saved: Gloo has no reduce-scatter (emulated with all-reduce)"
  std::string describe() const;

  // This rank's optimiser over its shard (under ZeRO: over flat pieces, not the model's
  // tensors); nullptr when its shard is empty (more ranks than parameter elements). Use it with wb::train::setLearningRate or to read param groups.
  torch::optim::Optimizer* optimizer();

  // For loops written against a torch::optim::Optimizer: an optimiser over ALL parameters whose
  // step() copies its first param group's lr to this rank's optimiser and runs step() above
  // (so it steps the shard and all-gathers), and whose zero_grad() is LibTorch's. Its param
  // groups are a copy of what `factory` builds, so wb::train::setLearningRate works on it.
  // step() throws std::runtime_error with the error's message when a collective fails (catch at
  // the worker's top level); save()/load() throw (consolidation is collective: use
  // consolidatedOptimizerState / loadOptimizerState). Borrows this DataParallel (outlive it).
  Result<std::unique_ptr<torch::optim::Optimizer>> steppingOptimizer();

  // Collective. The state of all shards as ONE unsharded optimiser over all parameters, in the
  // bytes saveOptimizerState writes: a checkpoint written from it resumes with sharding off,
  // or sharded again via loadOptimizerState. Returned on every rank (write it from rank 0).
  Result<std::string> consolidatedOptimizerState();
  // Local (no communication). Loads an unsharded state (from consolidatedOptimizerState or a
  // plain optimiser's saveOptimizerState over the same parameters) and keeps this rank's shard.
  Status loadOptimizerState(const std::string& bytes);

  struct Impl;

 private:
  explicit DataParallel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace wb::parallel
