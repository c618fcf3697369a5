// DataParallel's gradient buckets (as PyTorch's Reducer): laid out in reverse parameter order,
// filled by a hook after each parameter's AccumulateGrad, launched strictly in order while
// backward goes on, and waited for in finishGradients(), which writes the averaged gradients
// back and measures how much of the communication overlapped backward.
#include <algorithm>

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "data_parallel_impl.h"

namespace wb::parallel {
namespace {

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
  if (ready[i] || !sync) return;
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
  ++reductions;
  if (onDevice()) B.launch_point = timeline->mark();  // where the GPU has the bucket's gradients
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
  if (onDevice()) return;  // NCCL's future completes on the host long before the GPU is done
  try {
    auto slot = B.done_t;
    B.work->getFuture()->addCallback([slot](c10::ivalue::Future&) { slot->store(nowSeconds()); });
  } catch (const std::exception&) {
    // no future on this backend: completion is taken as the end of the wait
  }
}

bool DataParallel::Impl::onDevice() {
  if (!timeline) timeline = std::make_unique<DeviceTimeline>(ci.options.backend == Backend::Nccl);
  return timeline->onDevice();
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
  if (timeline) timeline->clear();
}

Status DataParallel::Impl::installHooks() {
  for (size_t i = 0; i < params.size(); ++i) {
    auto acc = torch::autograd::impl::grad_accumulator(params[i]);
    if (!acc) return makeError(Errc::Internal, "DataParallel: parameter " + std::to_string(i) + " has no gradient accumulator");
    hook_keys.push_back(acc->add_post_hook(std::make_unique<GradReadyHook>(this, i)));
    accumulators.push_back(std::move(acc));
  }
  return {};
}

Status DataParallel::finishGradients() {
  Impl& d = *impl_;
  d.last = CommStats{};
  if (!d.grouped()) return {};
  const double backward_end = nowSeconds();
  std::lock_guard<std::mutex> lock(d.mu);  // backward has returned: no hook is running
  const bool device = d.onDevice();
  const size_t backward_point = device ? d.timeline->mark() : 0;
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
  size_t done_point = 0;
  for (size_t b = 0; b < d.buckets.size(); ++b) {
    Bucket& B = d.buckets[b];
    auto st = waitWork(d.ci, std::string(d.native_rs ? "gradient reduce-scatter" : "gradient all-reduce") + " of bucket " +
                                 std::to_string(b),
                       B.work);
    if (!st) {
      d.resetStep();
      return st;
    }
    // NCCL: the wait made the compute stream wait for the collective; the point after it is
    // where the GPU could go on (never before backward's end on that stream).
    if (device) done_point = d.timeline->mark();
    const double done = B.done_t->load();
    last_done = std::max(last_done, done > 0 ? done : nowSeconds());
  }
  d.copyOut();

  CommStats& s = d.last;
  s.launch_ms = d.launch_ms;
  s.buckets = static_cast<int>(d.buckets.size());
  double first_launch = last_done;
  for (const Bucket& B : d.buckets) {
    first_launch = std::min(first_launch, B.launch_t);
    if (B.launch_t < backward_end) ++s.buckets_in_backward;
    s.bytes_reduced += B.flat_numel * static_cast<int64_t>(d.params.front().element_size());
  }
  if (device && !d.buckets.empty()) {
    // Device times, from the first launch (buckets launch in order): bucket 0 went first.
    DeviceTimeline& t = *d.timeline;
    const size_t first = d.buckets.front().launch_point;
    const double to_backward_end = t.msBetween(first, backward_point);
    const double to_done = t.msBetween(first, done_point);
    s.wait_ms = std::max(0.0, to_done - to_backward_end);
    s.overlap = overlapShare(0.0, to_backward_end, to_done);
  } else {
    s.wait_ms = (nowSeconds() - backward_end) * 1000.0;
    s.overlap = overlapShare(first_launch, backward_end, last_done);
  }
  s.comm_ms = s.launch_ms + s.wait_ms;
  d.resetStep();
  return {};
}

}  // namespace wb::parallel
