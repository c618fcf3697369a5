#pragma once
// Private to wb_parallel: the state of a DataParallel, shared by its three files:
//   data_parallel.cpp   create(), step(), the accessors and the Optimizer-shaped face
//   buckets.cpp         gradient buckets: layout, the backward hooks, launching in order, the
//                       wait and the averaged gradients (finishGradients), overlap statistics
//   zero.cpp            ZeRO: the flat partition, stepping this rank's shard, the parameter
//                       all-gather, and optimiser state cut into shards and joined back
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "comm_internal.h"
#include "device_timeline.h"
#include "wb/parallel/data_parallel.h"

namespace wb::parallel {

double nowSeconds();

// Elements [from, from + numel) of a flattened parameter at `at` in its bucket's flat tensor;
// `rank` owns them (reduce-scatter layout) or is -1 (all-reduce: the whole tensor, one segment).
struct Segment {
  int64_t from = 0;
  int64_t numel = 0;
  int64_t at = 0;
  int rank = -1;
};

struct Bucket {
  std::vector<size_t> params;     // indices into DataParallel::Impl::params, reverse parameter order
  std::vector<std::vector<Segment>> segments;  // per param (slot)
  int64_t flat_numel = 0;
  int64_t chunk = 0;              // reduce-scatter layout: per-rank chunk; flat = world * chunk
  torch::Tensor flat;             // all-reduce: persistent; reduce-scatter: this step's input
  torch::Tensor out;              // reduce-scatter: this rank's chunk of the sums
  size_t pending = 0;             // params whose gradient is not yet in `flat` this step
  c10::intrusive_ptr<c10d::Work> work;
  double launch_t = 0;            // host clock, seconds
  std::shared_ptr<std::atomic<double>> done_t = std::make_shared<std::atomic<double>>(0.0);  // Gloo
  size_t launch_point = 0;        // NCCL: the DeviceTimeline point of the launch
};

struct DataParallel::Impl {
  Impl(Communicator& c, DataParallelOptions o, OptimizerFactory f)
      : comm(c), ci(c.impl()), options(o), factory(std::move(f)) {}

  Communicator& comm;
  Communicator::Impl& ci;
  DataParallelOptions options;
  OptimizerFactory factory;
  std::vector<torch::Tensor> params;
  // ZeRO: every rank's pieces (partitionFlat) and this rank's as flat copies, which `inner` steps.
  std::vector<std::vector<ShardPiece>> layout;
  std::vector<torch::Tensor> pieces;
  int64_t chunk = 1;               // elements in one rank's range (the all-gather's size)
  std::vector<int64_t> owned;      // per param: elements this rank steps
  std::vector<int64_t> owned_from; // per param: where they start in the flattened tensor
  std::unique_ptr<torch::optim::Optimizer> inner;
  bool native_rs = false;  // zero2 on a backend with reduce-scatter
  bool rs_layout = false;  // buckets in reduce-scatter chunks (native_rs, or emulated for tests)

  std::vector<Bucket> buckets;
  std::vector<size_t> bucket_of;
  std::vector<size_t> slot_of;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;
  std::vector<uintptr_t> hook_keys;

  // Per step; the hooks and finishGradients take `mu`.
  std::mutex mu;
  bool sync = true;          // false between the micro-batches of an accumulated step: no hook copies or launches
  int64_t reductions = 0;    // gradient collectives launched since create()
  std::vector<char> ready;
  size_t next_launch = 0;
  double launch_ms = 0;
  std::optional<Error> hook_error;
  std::unique_ptr<DeviceTimeline> timeline;  // NCCL: the step's points on the GPU's timeline
  CommStats last;

  int rank() const { return comm.rank(); }
  int world() const { return comm.worldSize(); }
  bool sharded() const { return options.sharding != Sharding::Off; }
  bool grouped() const { return static_cast<bool>(ci.pg); }

  // Parameter i as a flat tensor sharing its storage (looked up each time: loading weights may
  // give a parameter new storage).
  torch::Tensor flat(size_t i) const { return params[i].detach().view(-1); }
  torch::Tensor pieceOf(const ShardPiece& piece) const { return flat(piece.param).narrow(0, piece.offset, piece.numel); }
  // Flat tensors shaped like rank r's pieces, for a throwaway optimiser over that shard.
  std::vector<torch::Tensor> pieceTensors(int r) const {
    std::vector<torch::Tensor> out;
    for (const auto& piece : layout[static_cast<size_t>(r)]) out.push_back(torch::empty({piece.numel}, params.front().options()));
    return out;
  }
  bool partlyOwned(size_t i) const { return owned[i] > 0 && owned[i] < params[i].numel(); }

  void partition();
  void layOutBuckets();
  Status installHooks();
  void onGradReady(size_t i);
  void copyIn(size_t i);
  void launchInOrder();
  void launch(size_t b);
  bool onDevice();  // NCCL: the step's statistics come from CUDA events (makes the timeline)
  void setGrad(size_t i, const torch::Tensor& flat_values, const Segment& segment);
  void copyOut();
  void resetStep();
  Status stepShard();
  Status gatherParameters();
};

}  // namespace wb::parallel
