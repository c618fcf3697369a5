#include "wb/train/replica_group.h"

#include <stdexcept>

#include "wb/parallel/communicator.h"
#include "wb/parallel/data_parallel.h"
#include "wb/train/optim.h"

namespace wb::train {
using nlohmann::json;

namespace {

void check(const Status& st) {
  if (!st.ok()) throw std::runtime_error(st.error().message);
}

// DDP / ZeRO through wb::parallel::DataParallel, over a process group or Communicator::local().
class DataParallelGroup final : public ReplicaGroup {
 public:
  DataParallelGroup(std::unique_ptr<parallel::Communicator> owned, parallel::Communicator& comm,
                    std::unique_ptr<parallel::DataParallel> dp, std::string requested, std::vector<torch::Tensor> buffers)
      : owned_(std::move(owned)),
        comm_(comm),
        dp_(std::move(dp)),
        requested_(std::move(requested)),
        buffers_(std::move(buffers)) {}

  int worldSize() const override { return comm_.worldSize(); }
  Result<std::unique_ptr<torch::optim::Optimizer>> makeOptimizer() override { return dp_->steppingOptimizer(); }
  void syncBuffers() override {
    if (buffers_.empty()) return;
    torch::NoGradGuard noGrad;
    check(comm_.broadcast(buffers_, 0));
  }
  void prepareBackward() override { dp_->zeroGrad(); }
  void finishBackward() override { check(dp_->finishGradients()); }
  void setGradientSync(bool on) override { dp_->setGradientSync(on); }
  int64_t gradientReductions() const override { return dp_->gradientReductions(); }
  std::string consolidatedOptimizerState() override {
    auto s = dp_->consolidatedOptimizerState();
    if (!s.ok()) throw std::runtime_error(s.error().message);
    return s.value();
  }
  Status loadOptimizerState(const std::string& bytes) override { return dp_->loadOptimizerState(bytes); }
  void allReduceSum(double* values, int n) override {
    if (worldSize() <= 1) return;
    auto r = comm_.allReduce(std::vector<double>(values, values + n), parallel::ReduceOp::Sum);
    if (!r.ok()) throw std::runtime_error(r.error().message);
    for (int i = 0; i < n; ++i) values[i] = r.value()[static_cast<size_t>(i)];
  }
  bool agreeOnStop(bool requested, int64_t iteration, int64_t every) override {
    if (worldSize() <= 1) return requested;
    if (iteration % std::max<int64_t>(1, every) != 0) return false;
    double flag = requested ? 1.0 : 0.0;
    allReduceSum(&flag, 1);
    return flag > 0;
  }
  proto::SpeedupStatus shardingStatus() const override {
    proto::SpeedupStatus s;
    s.requested = requested_ != "off";
    s.active = dp_->sharding() != parallel::Sharding::Off;
    s.note = s.active ? dp_->describe() : "off";
    if (worldSize() > 1) {
      s.optimizer_state_bytes = dp_->optimizerStateBytes();
      s.gradient_memory_saved = dp_->gradientMemorySaved();
    }
    return s;
  }
  json describe() const override {
    return json{{"backend", parallel::backendName(comm_.backend())},
                {"world_size", comm_.worldSize()},
                {"rank", comm_.rank()},
                {"buckets", dp_->numBuckets()},
                {"sharding", parallel::shardingName(dp_->sharding())},
                {"optimizer_state_bytes", dp_->optimizerStateBytes()},
                {"gradient_memory_saved", dp_->gradientMemorySaved()},
                {"description", dp_->describe()}};
  }
  proto::CommPart stats() override {
    const auto s = dp_->lastStats();
    proto::CommPart c;
    c.comm_ms = s.comm_ms;
    c.launch_ms = s.launch_ms;
    c.wait_ms = s.wait_ms;
    c.gather_ms = s.gather_ms;
    c.overlap = s.overlap;
    c.bytes_reduced = s.bytes_reduced;
    c.bytes_gathered = s.bytes_gathered;
    c.buckets = s.buckets;
    c.buckets_in_backward = s.buckets_in_backward;
    c.optimizer_state_bytes = dp_->optimizerStateBytes();
    return c;
  }

 private:
  std::unique_ptr<parallel::Communicator> owned_;  // a group of one's local communicator
  parallel::Communicator& comm_;
  std::unique_ptr<parallel::DataParallel> dp_;
  std::string requested_;               // speedups.sharding as configured
  std::vector<torch::Tensor> buffers_;  // floating-point buffers (BatchNorm running stats), several ranks
};

}  // namespace

Result<std::unique_ptr<ReplicaGroup>> makeReplicaGroup(const Config& config, parallel::Communicator* comm,
                                                       model::Model& model) {
  std::unique_ptr<parallel::Communicator> owned;
  if (!comm || comm->worldSize() <= 1) {
    owned = parallel::Communicator::local();
    comm = owned.get();
  }
  const bool several = comm->worldSize() > 1;
  parallel::DataParallelOptions o;
  if (several) {  // sharding needs ranks to split over (the validator asks for devices >= 2)
    auto sharding = parallel::parseSharding(config.speedups.sharding);
    if (!sharding.ok()) return sharding.error();
    o.sharding = sharding.value();
  }
  const OptimConfig optim = config.optim;
  auto dp = parallel::DataParallel::create(
      *comm, model.parameters(),
      [optim, multi = config.speedups.fused_optimizer](std::vector<torch::Tensor> params) {
        return makeOptimizer(optim, std::move(params), multi);
      },
      o);
  if (!dp.ok()) return dp.error();
  std::vector<torch::Tensor> buffers;
  if (several)
    for (const auto& [name, b] : model.namedBuffers())
      if (b.is_floating_point()) buffers.push_back(b);
  // Start from rank 0's buffers too (parameters are broadcast by DataParallel::create).
  if (!buffers.empty())
    if (auto st = comm->broadcast(buffers, 0); !st.ok()) return st.error();
  return std::unique_ptr<ReplicaGroup>(new DataParallelGroup(std::move(owned), *comm, std::move(dp.value()),
                                                             config.speedups.sharding, std::move(buffers)));
}

}  // namespace wb::train
