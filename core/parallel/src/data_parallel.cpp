#include "wb/parallel/data_parallel.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "data_parallel_impl.h"
#include "wb/common/choices.h"

namespace wb::parallel {

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

int64_t nbytes(const torch::Tensor& t) { return t.defined() ? static_cast<int64_t>(t.nbytes()) : 0; }

std::string megabytes(int64_t bytes) {
  std::ostringstream os;
  os.precision(3);
  os << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MB";
  return os.str();
}

// The Optimizer-shaped face of a DataParallel (see steppingOptimizer()).
class SteppingOptimizer final : public torch::optim::Optimizer {
 public:
  SteppingOptimizer(DataParallel& dp, std::vector<torch::optim::OptimizerParamGroup> groups,
                    std::unique_ptr<torch::optim::OptimizerOptions> defaults)
      : Optimizer(std::move(groups), std::move(defaults)), dp_(dp) {}
  torch::Tensor step(LossClosure closure = nullptr) override {
    TORCH_CHECK(!closure, "DataParallel's optimiser takes no closure");
    dp_.setLearningRate(param_groups().front().options().get_lr());
    if (auto st = dp_.step(); !st) throw std::runtime_error(st.error().message);
    return {};
  }
  void save(torch::serialize::OutputArchive&) const override {
    TORCH_CHECK(false, "DataParallel: save the optimiser with consolidatedOptimizerState() (collective)");
  }
  void load(torch::serialize::InputArchive&) override {
    TORCH_CHECK(false, "DataParallel: load the optimiser with DataParallel::loadOptimizerState()");
  }

 private:
  DataParallel& dp_;
};

}  // namespace

// ---- free functions ----------------------------------------------------------------------

// ---- free functions ----------------------------------------------------------------------

Result<Sharding> parseSharding(const std::string& name) {
  if (name == "off") return Sharding::Off;
  if (name == "zero1") return Sharding::Zero1;
  if (name == "zero2") return Sharding::Zero2;
  return makeError(Errc::InvalidConfig,
                   "speedups.sharding: '" + name + "' is unknown; use one of " + choiceValues(shardingChoices()));
}

const char* shardingName(Sharding s) {
  switch (s) {
    case Sharding::Zero1: return "zero1";
    case Sharding::Zero2: return "zero2";
    default: return "off";
  }
}

int64_t optimizerStateBytes(const torch::optim::Optimizer& optimizer) {
  namespace o = torch::optim;
  int64_t total = 0;
  bool unknown = false;
  for (const auto& item : optimizer.state()) {
    const o::OptimizerParamState* s = item.second.get();
    if (auto* a = dynamic_cast<const o::AdamParamState*>(s))
      total += nbytes(a->exp_avg()) + nbytes(a->exp_avg_sq()) + nbytes(a->max_exp_avg_sq());
    else if (auto* w = dynamic_cast<const o::AdamWParamState*>(s))
      total += nbytes(w->exp_avg()) + nbytes(w->exp_avg_sq()) + nbytes(w->max_exp_avg_sq());
    else if (auto* g = dynamic_cast<const o::SGDParamState*>(s))
      total += nbytes(g->momentum_buffer());
    else if (auto* ag = dynamic_cast<const o::AdagradParamState*>(s))
      total += nbytes(ag->sum());
    else if (auto* r = dynamic_cast<const o::RMSpropParamState*>(s))
      total += nbytes(r->square_avg()) + nbytes(r->momentum_buffer()) + nbytes(r->grad_avg());
    else
      unknown = true;
  }
  if (!unknown) return total;
  // An optimiser we do not know (e.g. a custom one): measure what it would write.
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  int64_t written = 0;
  archive.save_to([&](const void*, size_t n) {
    written += static_cast<int64_t>(n);
    return n;
  });
  return written;
}

std::string saveOptimizerState(torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream os;
  archive.save_to(os);
  return os.str();
}

Status loadOptimizerState(torch::optim::Optimizer& optimizer, const std::string& bytes) {
  size_t n_params = 0;
  std::optional<torch::Device> device;
  for (const auto& g : optimizer.param_groups()) {
    n_params += g.params().size();
    if (!device && !g.params().empty()) device = g.params().front().device();
  }
  try {
    torch::serialize::InputArchive archive;
    std::istringstream is(bytes);
    if (device) archive.load_from(is, *device);
    else archive.load_from(is);
    optimizer.load(archive);
    return {};
  } catch (const std::exception& e) {
    return makeError(Errc::Checkpoint, "optimiser state does not fit this optimiser (" + std::to_string(n_params) +
                                           " parameter tensors in " + std::to_string(optimizer.param_groups().size()) +
                                           " group(s)): " + shortWhat(e) +
                                           ". Was it written for another model or optimiser?");
  }
}

// ---- DataParallel ------------------------------------------------------------------------

DataParallel::DataParallel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DataParallel::~DataParallel() {
  for (size_t i = 0; i < impl_->accumulators.size(); ++i) impl_->accumulators[i]->del_post_hook(impl_->hook_keys[i]);
}

Result<std::unique_ptr<DataParallel>> DataParallel::create(Communicator& comm, std::vector<torch::Tensor> params,
                                                           OptimizerFactory factory, const DataParallelOptions& options) {
  auto invalid = [](std::string m) { return makeError(Errc::InvalidConfig, std::move(m)); };
  if (params.empty()) return invalid("DataParallel: the model has no parameters to train");
  if (!factory) return invalid("DataParallel: no optimiser factory given");
  if (options.bucket_bytes <= 0 || options.first_bucket_bytes <= 0)
    return invalid("DataParallel: bucket_bytes and first_bucket_bytes must be > 0");
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    const std::string which = "parameter " + std::to_string(i);
    if (!p.defined() || !p.requires_grad() || !p.is_leaf())
      return invalid("DataParallel: " + which + " is not a leaf tensor that requires grad; pass only trainable parameters");
    if (!p.is_contiguous())
      return invalid("DataParallel: " + which + " is not contiguous; make the model's parameters contiguous first");
    if (p.scalar_type() != params[0].scalar_type() || p.device() != params[0].device())
      return invalid("DataParallel: " + which + " is " + std::string(c10::toString(p.scalar_type())) + " on " +
                     p.device().str() + " but parameter 0 is " + c10::toString(params[0].scalar_type()) + " on " +
                     params[0].device().str() + "; keep every parameter in one dtype on one device");
  }
  if (comm.hasGroup() && comm.backend() == Backend::Nccl && params[0].device() != comm.device())
    return invalid("DataParallel: parameters are on " + params[0].device().str() + " but this NCCL rank uses " +
                   comm.device().str() + "; move the model to Communicator::device() first");

  auto impl = std::make_unique<Impl>(comm, options, std::move(factory));
  impl->params = std::move(params);
  Impl& d = *impl;
  if (options.broadcast_parameters)
    if (auto st = comm.broadcast(d.params, 0); !st) return st.error();

  d.native_rs = options.sharding == Sharding::Zero2 && comm.nativeReduceScatter();
  d.rs_layout = d.native_rs || (options.sharding == Sharding::Zero2 && options.emulate_reduce_scatter);
  d.partition();
  auto stepped = d.sharded() ? d.pieces : d.params;
  if (!stepped.empty()) {
    auto built = d.factory(stepped);
    if (!built) return built.error();
    d.inner = std::move(*built);
  }

  if (d.grouped()) {
    d.layOutBuckets();
    if (auto st = d.installHooks(); !st) return st.error();
  }
  return std::unique_ptr<DataParallel>(new DataParallel(std::move(impl)));
}

Status DataParallel::step() {
  Impl& d = *impl_;
  if (d.sharded()) {
    if (auto st = d.stepShard(); !st) return st;
  } else if (d.inner) {
    try {
      d.inner->step();
    } catch (const std::exception& e) {
      return makeError(Errc::Internal, "rank " + std::to_string(d.rank()) + ": optimiser step failed: " + shortWhat(e));
    }
  }
  if (!d.sharded() || !d.grouped()) return {};
  const double t0 = nowSeconds();
  if (auto st = d.gatherParameters(); !st) return st;
  d.last.gather_ms = (nowSeconds() - t0) * 1000.0;
  d.last.comm_ms += d.last.gather_ms;
  return {};
}

void DataParallel::zeroGrad() {
  for (auto& p : impl_->params) p.mutable_grad().reset();
}

void DataParallel::setLearningRate(double lr) {
  if (!impl_->inner) return;
  for (auto& group : impl_->inner->param_groups()) group.options().set_lr(lr);
}

CommStats DataParallel::lastStats() const { return impl_->last; }

void DataParallel::setGradientSync(bool on) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->sync = on;
}

int64_t DataParallel::gradientReductions() const { return impl_->reductions; }

int64_t DataParallel::optimizerStateBytes() const {
  return impl_->inner ? wb::parallel::optimizerStateBytes(*impl_->inner) : 0;
}

bool DataParallel::gradientMemorySaved() const { return impl_->native_rs; }
Sharding DataParallel::sharding() const { return impl_->options.sharding; }
int DataParallel::numBuckets() const { return static_cast<int>(impl_->buckets.size()); }
int64_t DataParallel::ownedNumel(size_t i) const { return impl_->owned.at(i); }
torch::optim::Optimizer* DataParallel::optimizer() { return impl_->inner.get(); }

std::string DataParallel::describe() const {
  const Impl& d = *impl_;
  std::ostringstream os;
  os << shardingName(d.options.sharding) << " over " << (d.grouped() ? backendName(d.comm.backend()) : "no group")
     << ", " << d.world() << " rank(s), " << d.buckets.size() << " bucket(s) (cap " << megabytes(d.options.bucket_bytes)
     << ")";
  // Before the first step a lazy optimiser (Adam) holds no state yet: say what this rank will step.
  int64_t mine = 0, total = 0;
  for (const auto& p : d.params) total += p.numel();
  for (int64_t n : d.owned) mine += n;
  os << ", this rank steps " << mine << " of " << total << " parameters ("
     << (total > 0 ? (100 * mine + total / 2) / total : 0) << " %"
     << (d.sharded() ? "; ZeRO cuts the parameters, laid end to end, into equal ranges" : "") << ")";
  if (optimizerStateBytes() > 0) os << ", optimiser state " << megabytes(optimizerStateBytes()) << " on this rank";
  if (d.options.sharding == Sharding::Zero2 && !d.native_rs)
    os << "; gradient memory not saved: " << (d.grouped() ? "Gloo has no reduce-scatter (emulated with all-reduce)" : "one process");
  return os.str();
}

Result<std::unique_ptr<torch::optim::Optimizer>> DataParallel::steppingOptimizer() {
  auto probe = impl_->factory(impl_->params);  // holds no state: only its groups and options are used
  if (!probe) return probe.error();
  std::vector<torch::optim::OptimizerParamGroup> groups;
  for (auto& g : (*probe)->param_groups()) groups.emplace_back(g.params(), g.options().clone());
  return std::unique_ptr<torch::optim::Optimizer>(
      std::make_unique<SteppingOptimizer>(*this, std::move(groups), (*probe)->defaults().clone()));
}

}  // namespace wb::parallel
