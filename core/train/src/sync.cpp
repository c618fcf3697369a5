#include "wb/train/sync.h"

#include <stdexcept>

#include "wb/dist/communicator.h"
#include "wb/dist/data_parallel.h"
#include "wb/train/optim.h"

namespace wb::train {
using nlohmann::json;

namespace {

// DDP / ZeRO through wb::dist::DataParallel. Collective failures surface as exceptions on the
// training thread (the worker's top level turns them into an `error` event naming the rank).
class DataParallelSync : public GradSync {
 public:
  DataParallelSync(dist::Communicator& comm, std::unique_ptr<dist::DataParallel> dp, std::string sharding,
                   std::vector<torch::Tensor> buffers)
      : comm_(comm), dp_(std::move(dp)), sharding_(std::move(sharding)), buffers_(std::move(buffers)) {}

  Result<std::unique_ptr<torch::optim::Optimizer>> makeOptimizer(const OptimConfig&) override {
    return dp_->steppingOptimizer();
  }
  void syncBuffers() override {
    if (buffers_.empty()) return;
    torch::NoGradGuard noGrad;
    check(comm_.broadcast(buffers_, 0));
  }
  void prepareBackward() override { dp_->zeroGrad(); }
  void finishBackward() override { check(dp_->finishGradients()); }
  std::string consolidatedOptimizerState(torch::optim::Optimizer&) override {
    auto s = dp_->consolidatedOptimizerState();
    if (!s.ok()) throw std::runtime_error(s.error().message);
    return s.value();
  }
  Status loadOptimizerState(torch::optim::Optimizer&, const std::string& bytes) override {
    return dp_->loadOptimizerState(bytes);
  }
  void allReduceSum(double* values, int n) override {
    auto r = comm_.allReduce(std::vector<double>(values, values + n), dist::ReduceOp::Sum);
    if (!r.ok()) throw std::runtime_error(r.error().message);
    for (int i = 0; i < n; ++i) values[i] = r.value()[static_cast<size_t>(i)];
  }
  json shardingStatus() const override {
    const bool on = sharding_ != "off";
    std::string note = on ? dp_->describe() : "off";
    return json{{"requested", on},
                {"active", on},
                {"note", note},
                {"optimizer_state_bytes", dp_->optimizerStateBytes()},
                {"gradient_memory_saved", dp_->gradientMemorySaved()}};
  }
  json describe() const override {
    return json{{"backend", dist::backendName(comm_.backend())},
                {"world_size", comm_.worldSize()},
                {"rank", comm_.rank()},
                {"buckets", dp_->numBuckets()},
                {"sharding", sharding_},
                {"optimizer_state_bytes", dp_->optimizerStateBytes()},
                {"gradient_memory_saved", dp_->gradientMemorySaved()},
                {"description", dp_->describe()}};
  }
  json stats() override {
    auto s = dp_->lastStats();
    return json{{"comm_ms", s.comm_ms},           {"launch_ms", s.launch_ms},
                {"wait_ms", s.wait_ms},           {"gather_ms", s.gather_ms},
                {"overlap", s.overlap},           {"bytes_reduced", s.bytes_reduced},
                {"bytes_gathered", s.bytes_gathered}, {"buckets", s.buckets},
                {"buckets_in_backward", s.buckets_in_backward},
                {"optimizer_state_bytes", dp_->optimizerStateBytes()}};
  }

 private:
  static void check(const Status& st) {
    if (!st.ok()) throw std::runtime_error(st.error().message);
  }
  dist::Communicator& comm_;
  std::unique_ptr<dist::DataParallel> dp_;
  std::string sharding_;
  std::vector<torch::Tensor> buffers_;  // floating-point buffers (BatchNorm running stats)
};

}  // namespace

Result<std::unique_ptr<GradSync>> makeGradSync(const Config& config, dist::Communicator* comm,
                                               model::Model& model, const torch::Device&) {
  if (!comm || comm->worldSize() <= 1) return std::unique_ptr<GradSync>();
  auto sharding = dist::parseSharding(config.speedups.sharding);
  if (!sharding.ok()) return sharding.error();
  dist::DataParallelOptions o;
  o.sharding = sharding.value();
  const OptimConfig optim = config.optim;
  auto dp = dist::DataParallel::create(
      *comm, model.parameters(),
      [optim](std::vector<torch::Tensor> params) { return makeOptimizer(optim, std::move(params)); }, o);
  if (!dp.ok()) return dp.error();
  std::vector<torch::Tensor> buffers;
  for (const auto& [name, b] : model.namedBuffers())
    if (b.is_floating_point()) buffers.push_back(b);
  // Start from rank 0's buffers too (parameters are broadcast by DataParallel::create).
  if (!buffers.empty())
    if (auto st = comm->broadcast(buffers, 0); !st.ok()) return st.error();
  return std::unique_ptr<GradSync>(
      new DataParallelSync(*comm, std::move(dp.value()), config.speedups.sharding, std::move(buffers)));
}

}  // namespace wb::train
