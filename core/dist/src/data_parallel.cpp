#include "wb/dist/data_parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <optional>
#include <sstream>

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "comm_internal.h"

namespace wb::dist {
namespace {

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int64_t nbytes(const torch::Tensor& t) { return t.defined() ? static_cast<int64_t>(t.nbytes()) : 0; }

std::string megabytes(int64_t bytes) {
  std::ostringstream os;
  os.precision(3);
  os << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MB";
  return os.str();
}

// ---- one parameter's optimiser state, cut into pieces and joined back ---------------------
// LibTorch's per-parameter states (AdamParamState, SGDParamState, ...) have no generic accessor
// but their serialize(): read and write them through an archive, field by field.
using Fields = std::vector<std::pair<std::string, c10::IValue>>;

Fields fieldsOf(const torch::optim::OptimizerParamState& state) {
  torch::serialize::OutputArchive out;
  state.serialize(out);
  std::stringstream bytes;
  out.save_to(bytes);
  torch::serialize::InputArchive in;
  in.load_from(bytes);
  Fields fields;
  for (const auto& key : in.keys()) {
    if (key == "training") continue;  // every archive's module has it; not a state field
    c10::IValue value;
    in.read(key, value);
    fields.emplace_back(key, std::move(value));
  }
  return fields;
}

std::unique_ptr<torch::optim::OptimizerParamState> withFields(const torch::optim::OptimizerParamState& like,
                                                              const Fields& fields) {
  torch::serialize::OutputArchive out;
  for (const auto& [key, value] : fields) out.write(key, value);
  std::stringstream bytes;
  out.save_to(bytes);
  torch::serialize::InputArchive in;
  in.load_from(bytes);
  auto state = like.clone();
  state->serialize(in);
  return state;
}

bool isTensorOfShape(const c10::IValue& v, at::IntArrayRef shape) {
  return v.isTensor() && v.toTensor().defined() && v.toTensor().sizes() == shape;
}

// The state of a whole tensor of `shape` from the states of its pieces (element order) of
// `lengths`: element-wise state tensors (one value per element, 1-D in a piece) are
// concatenated; other fields (step counts) are equal in every piece and taken from the first.
std::unique_ptr<torch::optim::OptimizerParamState> joinStates(
    const std::vector<const torch::optim::OptimizerParamState*>& parts, const std::vector<int64_t>& lengths,
    at::IntArrayRef shape) {
  std::vector<Fields> fields;
  for (const auto* part : parts) fields.push_back(fieldsOf(*part));
  Fields joined = fields.front();
  for (auto& [key, value] : joined) {
    if (!isTensorOfShape(value, {lengths.front()})) continue;
    std::vector<torch::Tensor> pieces;
    for (size_t j = 0; j < fields.size(); ++j) {
      auto it = std::find_if(fields[j].begin(), fields[j].end(), [&](const auto& f) { return f.first == key; });
      if (it == fields[j].end() || !isTensorOfShape(it->second, {lengths[j]}))
        throw std::runtime_error("the pieces' states disagree on '" + key + "'");
      pieces.push_back(it->second.toTensor());
    }
    value = torch::cat(pieces).view(shape);
  }
  return withFields(*parts.front(), joined);
}

// The state of elements [offset, offset + numel) of a tensor of `shape`, from its whole state.
std::unique_ptr<torch::optim::OptimizerParamState> sliceState(const torch::optim::OptimizerParamState& whole,
                                                              at::IntArrayRef shape, int64_t offset, int64_t numel) {
  Fields fields = fieldsOf(whole);
  for (auto& [key, value] : fields)
    if (isTensorOfShape(value, shape)) value = value.toTensor().reshape(-1).narrow(0, offset, numel).clone();
  return withFields(whole, fields);
}

}  // namespace

// ---- free functions ----------------------------------------------------------------------

Result<Sharding> parseSharding(const std::string& name) {
  if (name == "off") return Sharding::Off;
  if (name == "zero1") return Sharding::Zero1;
  if (name == "zero2") return Sharding::Zero2;
  return makeError(Errc::InvalidConfig, "speedups.sharding: '" + name + "' is unknown; use off, zero1 or zero2");
}

const char* shardingName(Sharding s) {
  switch (s) {
    case Sharding::Zero1: return "zero1";
    case Sharding::Zero2: return "zero2";
    default: return "off";
  }
}

std::vector<std::vector<ShardPiece>> partitionFlat(const std::vector<int64_t>& numels, int world_size) {
  const int64_t world = std::max(world_size, 1);
  const int64_t total = std::accumulate(numels.begin(), numels.end(), int64_t{0});
  const int64_t chunk = (total + world - 1) / world;
  std::vector<std::vector<ShardPiece>> pieces(static_cast<size_t>(world));
  int64_t start = 0;  // flat offset of tensor i
  for (size_t i = 0; i < numels.size(); ++i) {
    const int64_t end = start + numels[i];
    for (int64_t at = start; at < end;) {
      const int64_t rank = at / chunk;
      const int64_t upto = std::min(end, (rank + 1) * chunk);
      pieces[static_cast<size_t>(rank)].push_back(ShardPiece{i, at - start, upto - at});
      at = upto;
    }
    start = end;
  }
  return pieces;
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

namespace {

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
  double launch_t = 0;
  std::shared_ptr<std::atomic<double>> done_t = std::make_shared<std::atomic<double>>(0.0);
};

}  // namespace

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
  std::vector<char> ready;
  size_t next_launch = 0;
  double launch_ms = 0;
  std::optional<Error> hook_error;
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
  void onGradReady(size_t i);
  void copyIn(size_t i);
  void launchInOrder();
  void launch(size_t b);
  void setGrad(size_t i, const torch::Tensor& flat_values, const Segment& segment);
  void copyOut();
  void resetStep();
  Status stepShard();
  Status gatherParameters();
};

namespace {

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

// Runs after a parameter's AccumulateGrad: its .grad is final for this backward.
struct GradReadyHook final : torch::autograd::FunctionPostHook {
  GradReadyHook(DataParallel::Impl* impl, size_t index) : impl_(impl), index_(index) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    impl_->onGradReady(index_);
    return outputs;
  }
  DataParallel::Impl* impl_;
  size_t index_;
};

}  // namespace

void DataParallel::Impl::partition() {
  owned.assign(params.size(), 0);
  owned_from.assign(params.size(), 0);
  if (!sharded()) {
    for (size_t i = 0; i < params.size(); ++i) owned[i] = params[i].numel();
    return;
  }
  std::vector<int64_t> numels;
  for (const auto& p : params) numels.push_back(p.numel());
  layout = partitionFlat(numels, world());
  const int64_t total = std::accumulate(numels.begin(), numels.end(), int64_t{0});
  chunk = std::max<int64_t>(1, (total + world() - 1) / world());
  for (const auto& piece : layout[static_cast<size_t>(rank())]) {
    owned[piece.param] = piece.numel;
    owned_from[piece.param] = piece.offset;
  }
  pieces = pieceTensors(rank());
}

void DataParallel::Impl::layOutBuckets() {
  const int64_t elem = static_cast<int64_t>(params.front().element_size());
  int64_t cap = std::max<int64_t>(1, options.first_bucket_bytes);
  Bucket current;
  int64_t current_bytes = 0;
  auto close = [&] {
    buckets.push_back(std::move(current));
    current = Bucket{};
    current_bytes = 0;
    cap = std::max<int64_t>(1, options.bucket_bytes);
  };
  // Reverse order, closing a bucket once it reaches its cap (as Reducer's assignment by size).
  for (size_t k = params.size(); k-- > 0;) {
    current.params.push_back(k);
    current_bytes += params[k].numel() * elem;
    if (current_bytes >= cap) close();
  }
  if (!current.params.empty()) close();

  // Reduce-scatter: each parameter's pieces by owner rank.
  std::vector<std::vector<Segment>> parts(params.size());
  if (rs_layout)
    for (int r = 0; r < world(); ++r)
      for (const auto& piece : layout[static_cast<size_t>(r)])
        parts[piece.param].push_back(Segment{piece.offset, piece.numel, 0, r});

  bucket_of.assign(params.size(), 0);
  slot_of.assign(params.size(), 0);
  auto dev = params.front().options();
  for (size_t b = 0; b < buckets.size(); ++b) {
    Bucket& B = buckets[b];
    B.segments.assign(B.params.size(), {});
    if (rs_layout) {
      // Chunk r holds the elements rank r owns, padded to the largest chunk.
      std::vector<int64_t> fill(static_cast<size_t>(world()), 0);
      for (size_t i : B.params)
        for (const Segment& seg : parts[i]) fill[static_cast<size_t>(seg.rank)] += seg.numel;
      B.chunk = std::max<int64_t>(1, *std::max_element(fill.begin(), fill.end()));
      std::fill(fill.begin(), fill.end(), 0);
      for (size_t s = 0; s < B.params.size(); ++s) {
        for (Segment seg : parts[B.params[s]]) {
          int64_t& f = fill[static_cast<size_t>(seg.rank)];
          seg.at = seg.rank * B.chunk + f;
          f += seg.numel;
          B.segments[s].push_back(seg);
        }
      }
      B.flat_numel = world() * B.chunk;
      B.out = torch::empty({B.chunk}, dev);
    } else {
      int64_t off = 0;
      for (size_t s = 0; s < B.params.size(); ++s) {
        const int64_t n = params[B.params[s]].numel();
        B.segments[s].push_back(Segment{0, n, off, -1});
        off += n;
      }
      B.flat_numel = off;
      B.flat = torch::zeros({off}, dev);
    }
    for (size_t s = 0; s < B.params.size(); ++s) {
      bucket_of[B.params[s]] = b;
      slot_of[B.params[s]] = s;
    }
  }
  ready.assign(params.size(), 0);
  resetStep();
}

void DataParallel::Impl::copyIn(size_t i) {
  torch::NoGradGuard no_grad;
  Bucket& B = buckets[bucket_of[i]];
  const torch::Tensor& p = params[i];
  if (!B.flat.defined()) B.flat = torch::zeros({B.flat_numel}, p.options());  // reduce-scatter input
  const torch::Tensor& g = p.grad();
  for (const Segment& seg : B.segments[slot_of[i]]) {
    auto dst = B.flat.narrow(0, seg.at, seg.numel);
    if (g.defined()) dst.copy_(g.reshape(-1).narrow(0, seg.from, seg.numel));
    else dst.zero_();
  }
  // zero2: the bucket holds the data now; a rank keeps only the gradients of its range.
  if (options.sharding == Sharding::Zero2 && owned[i] == 0) p.mutable_grad().reset();
}

void DataParallel::Impl::onGradReady(size_t i) {
  std::lock_guard<std::mutex> lock(mu);
  if (ready[i]) return;
  const double t0 = nowSeconds();
  try {
    copyIn(i);
  } catch (const std::exception& e) {
    if (!hook_error) hook_error = makeError(Errc::Internal, "copying a gradient into its bucket failed: " + shortWhat(e));
  }
  ready[i] = 1;
  if (--buckets[bucket_of[i]].pending == 0) launchInOrder();
  launch_ms += (nowSeconds() - t0) * 1000.0;
}

void DataParallel::Impl::launchInOrder() {
  while (next_launch < buckets.size() && buckets[next_launch].pending == 0) launch(next_launch++);
}

void DataParallel::Impl::launch(size_t b) {
  Bucket& B = buckets[b];
  B.launch_t = nowSeconds();
  B.done_t->store(0.0);
  try {
    if (native_rs) {
      B.work = ci.pg->_reduce_scatter_base(B.out, B.flat);
      B.flat = torch::Tensor();  // the backend keeps the input alive until it is done
    } else {  // all-reduce; the emulated reduce-scatter layout reads its chunk from `flat` after

      std::vector<torch::Tensor> tensors{B.flat};
      B.work = ci.pg->allreduce(tensors);
    }
  } catch (const std::exception& e) {
    if (!hook_error)
      hook_error = collectiveError(ci, std::string(native_rs ? "gradient reduce-scatter" : "gradient all-reduce") +
                                           " of bucket " + std::to_string(b),
                                   e);
    return;
  }
  try {
    auto slot = B.done_t;
    B.work->getFuture()->addCallback([slot](c10::ivalue::Future&) { slot->store(nowSeconds()); });
  } catch (const std::exception&) {
    // no future on this backend: completion is taken as the end of the wait
  }
}

// Writes `values` (the bucket's averaged sums for `segment`) into params[i].grad. Under zero2 a
// tensor split between ranks keeps zeros outside this rank's part.
void DataParallel::Impl::setGrad(size_t i, const torch::Tensor& values, const Segment& segment) {
  torch::Tensor& g = params[i].mutable_grad();
  const bool keep_part = options.sharding == Sharding::Zero2 && partlyOwned(i);
  if (!g.defined() || !g.is_contiguous()) g = torch::zeros_like(params[i], at::MemoryFormat::Contiguous);
  auto dst = g.view(-1);
  if (keep_part) dst.zero_();
  const int64_t from = keep_part ? owned_from[i] : segment.from;
  const int64_t n = keep_part ? owned[i] : segment.numel;
  dst.narrow(0, from, n).copy_(values.narrow(0, from - segment.from, n));
}

void DataParallel::Impl::copyOut() {
  torch::NoGradGuard no_grad;
  for (Bucket& B : buckets) {
    if (rs_layout) {
      torch::Tensor mine = native_rs ? B.out : B.flat.narrow(0, rank() * B.chunk, B.chunk);
      mine.div_(world());
      for (size_t s = 0; s < B.params.size(); ++s)
        for (const Segment& seg : B.segments[s])
          if (seg.rank == rank()) setGrad(B.params[s], mine.narrow(0, seg.at - rank() * B.chunk, seg.numel), seg);
    } else {
      B.flat.div_(world());
      for (size_t s = 0; s < B.params.size(); ++s) {
        const size_t i = B.params[s];
        if (options.sharding == Sharding::Zero2 && owned[i] == 0) continue;
        const Segment& seg = B.segments[s].front();
        setGrad(i, B.flat.narrow(0, seg.at, seg.numel), seg);
      }
    }
  }
}

void DataParallel::Impl::resetStep() {
  std::fill(ready.begin(), ready.end(), 0);
  for (Bucket& B : buckets) {
    B.pending = B.params.size();
    B.work.reset();
    B.launch_t = 0;
  }
  next_launch = 0;
  launch_ms = 0;
  hook_error.reset();
}

// ZeRO: copies this rank's range into its pieces with the averaged gradients, steps them and
// writes the result back into the parameters.
Status DataParallel::Impl::stepShard() {
  if (!inner) return {};
  torch::NoGradGuard no_grad;
  const auto& mine = layout[static_cast<size_t>(rank())];
  try {
    for (size_t k = 0; k < mine.size(); ++k) {
      pieces[k].copy_(pieceOf(mine[k]));
      const torch::Tensor& g = params[mine[k].param].grad();
      if (g.defined()) pieces[k].mutable_grad() = g.reshape(-1).narrow(0, mine[k].offset, mine[k].numel);
      else pieces[k].mutable_grad().reset();
    }
    inner->step();
    for (size_t k = 0; k < mine.size(); ++k) {
      pieceOf(mine[k]).copy_(pieces[k]);
      pieces[k].mutable_grad().reset();
    }
  } catch (const std::exception& e) {
    return makeError(Errc::Internal, "rank " + std::to_string(rank()) + ": optimiser step failed: " + shortWhat(e));
  }
  return {};
}

Status DataParallel::Impl::gatherParameters() {
  torch::NoGradGuard no_grad;
  const auto opts = params.front().options();
  auto mine = torch::zeros({chunk}, opts);
  int64_t off = 0;
  for (const auto& piece : layout[static_cast<size_t>(rank())]) {
    mine.narrow(0, off, piece.numel).copy_(pieceOf(piece));
    off += piece.numel;
  }
  std::vector<torch::Tensor> in{mine};
  std::vector<std::vector<torch::Tensor>> out(1);
  for (int r = 0; r < world(); ++r) out[0].push_back(torch::empty({chunk}, opts));
  try {
    if (auto st = waitWork(ci, "parameter all-gather", ci.pg->allgather(out, in)); !st) return st;
  } catch (const std::exception& e) {
    return collectiveError(ci, "parameter all-gather", e);
  }
  for (int r = 0; r < world(); ++r) {
    if (r == rank()) continue;
    off = 0;
    for (const auto& piece : layout[static_cast<size_t>(r)]) {
      pieceOf(piece).copy_(out[0][static_cast<size_t>(r)].narrow(0, off, piece.numel));
      off += piece.numel;
    }
  }
  last.bytes_gathered = static_cast<int64_t>(world()) * chunk * static_cast<int64_t>(mine.element_size());
  return {};
}

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
    for (size_t i = 0; i < d.params.size(); ++i) {
      auto acc = torch::autograd::impl::grad_accumulator(d.params[i]);
      if (!acc) return makeError(Errc::Internal, "DataParallel: parameter " + std::to_string(i) + " has no gradient accumulator");
      d.hook_keys.push_back(acc->add_post_hook(std::make_unique<GradReadyHook>(impl.get(), i)));
      d.accumulators.push_back(std::move(acc));
    }
  }
  return std::unique_ptr<DataParallel>(new DataParallel(std::move(impl)));
}

Status DataParallel::finishGradients() {
  Impl& d = *impl_;
  d.last = CommStats{};
  if (!d.grouped()) return {};
  const double backward_end = nowSeconds();
  std::lock_guard<std::mutex> lock(d.mu);  // backward has returned: no hook is running
  // Parameters whose hook did not fire (unused this step) go as they are, so buckets stay in step.
  for (size_t i = 0; i < d.params.size(); ++i) {
    if (d.ready[i]) continue;
    d.copyIn(i);
    d.ready[i] = 1;
    --d.buckets[d.bucket_of[i]].pending;
  }
  d.launchInOrder();
  if (d.hook_error) {
    Error e = *d.hook_error;
    d.resetStep();
    return e;
  }
  double last_done = 0;
  for (size_t b = 0; b < d.buckets.size(); ++b) {
    Bucket& B = d.buckets[b];
    auto st = waitWork(d.ci, std::string(d.native_rs ? "gradient reduce-scatter" : "gradient all-reduce") + " of bucket " +
                                 std::to_string(b),
                       B.work);
    if (!st) {
      d.resetStep();
      return st;
    }
    const double done = B.done_t->load();
    last_done = std::max(last_done, done > 0 ? done : nowSeconds());
  }
  d.copyOut();

  CommStats& s = d.last;
  s.launch_ms = d.launch_ms;
  s.wait_ms = (nowSeconds() - backward_end) * 1000.0;
  s.comm_ms = s.launch_ms + s.wait_ms;
  s.buckets = static_cast<int>(d.buckets.size());
  double first_launch = last_done;
  for (const Bucket& B : d.buckets) {
    first_launch = std::min(first_launch, B.launch_t);
    if (B.launch_t < backward_end) ++s.buckets_in_backward;
    s.bytes_reduced += B.flat_numel * static_cast<int64_t>(d.params.front().element_size());
  }
  const double window = last_done - first_launch;
  const double overlapped = std::clamp(std::min(backward_end, last_done) - first_launch, 0.0, std::max(window, 0.0));
  s.overlap = window > 0 ? overlapped / window : 0.0;
  d.resetStep();
  return {};
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

int64_t DataParallel::optimizerStateBytes() const {
  return impl_->inner ? wb::dist::optimizerStateBytes(*impl_->inner) : 0;
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

Result<std::string> DataParallel::consolidatedOptimizerState() {
  Impl& d = *impl_;
  if (!d.sharded()) {
    if (!d.inner) return makeError(Errc::Internal, "DataParallel: no optimiser");
    return saveOptimizerState(*d.inner);
  }
  const std::string mine = d.inner ? saveOptimizerState(*d.inner) : std::string();
  auto all = d.comm.allGatherBytes(mine);
  if (!all) return all.error();
  auto full = d.factory(d.params);
  if (!full) return full.error();
  // Every rank's shard state, loaded into a throwaway optimiser over tensors shaped like its pieces.
  std::vector<std::unique_ptr<torch::optim::Optimizer>> shards;
  std::vector<std::vector<const torch::optim::OptimizerParamState*>> parts(d.params.size());
  std::vector<std::vector<int64_t>> lengths(d.params.size());
  for (int r = 0; r < d.world(); ++r) {
    const auto& bytes = (*all)[static_cast<size_t>(r)];
    const auto& layout = d.layout[static_cast<size_t>(r)];
    if (layout.empty() || bytes.empty()) continue;
    auto tensors = d.pieceTensors(r);
    auto shard = d.factory(tensors);
    if (!shard) return shard.error();
    if (auto st = wb::dist::loadOptimizerState(**shard, bytes); !st)
      return makeError(Errc::Checkpoint, "optimiser shard of rank " + std::to_string(r) + ": " + st.error().message);
    const auto& state = (*shard)->state();
    for (size_t k = 0; k < layout.size(); ++k) {
      auto it = state.find(compat::optimizerStateKey(state, tensors[k]));
      if (it == state.end()) continue;  // not stepped yet (lazy state)
      parts[layout[k].param].push_back(it->second.get());
      lengths[layout[k].param].push_back(layout[k].numel);
    }
    shards.push_back(std::move(*shard));
  }
  auto& state = (*full)->state();
  for (size_t i = 0; i < d.params.size(); ++i) {
    if (parts[i].empty()) continue;
    const int64_t covered = std::accumulate(lengths[i].begin(), lengths[i].end(), int64_t{0});
    try {
      if (covered != d.params[i].numel()) throw std::runtime_error("the shards hold state for only part of it");
      state[compat::optimizerStateKey(state, d.params[i])] = joinStates(parts[i], lengths[i], d.params[i].sizes());
    } catch (const std::exception& e) {
      return makeError(Errc::Checkpoint, "rank " + std::to_string(d.rank()) + ": joining the optimiser state of parameter " +
                                             std::to_string(i) + " from its shards failed: " + shortWhat(e));
    }
  }
  return saveOptimizerState(**full);
}

Status DataParallel::loadOptimizerState(const std::string& bytes) {
  Impl& d = *impl_;
  if (!d.sharded()) {
    if (!d.inner) return makeError(Errc::Internal, "DataParallel: no optimiser");
    return wb::dist::loadOptimizerState(*d.inner, bytes);
  }
  auto full = d.factory(d.params);
  if (!full) return full.error();
  if (auto st = wb::dist::loadOptimizerState(**full, bytes); !st) return st;
  if (!d.inner) return {};
  auto& dst = d.inner->state();
  dst.clear();
  const auto& src = (*full)->state();
  const auto& mine = d.layout[static_cast<size_t>(d.rank())];
  for (size_t k = 0; k < mine.size(); ++k) {
    const torch::Tensor& p = d.params[mine[k].param];
    auto it = src.find(compat::optimizerStateKey(src, p));
    if (it == src.end()) continue;
    try {
      dst[compat::optimizerStateKey(dst, d.pieces[k])] = sliceState(*it->second, p.sizes(), mine[k].offset, mine[k].numel);
    } catch (const std::exception& e) {
      return makeError(Errc::Checkpoint, "rank " + std::to_string(d.rank()) + ": cutting the optimiser state of parameter " +
                                             std::to_string(mine[k].param) + " into this rank's shard failed: " + shortWhat(e));
    }
  }
  return {};
}

}  // namespace wb::dist
