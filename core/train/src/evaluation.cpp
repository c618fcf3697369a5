// Evaluation over the validation split, and the memory figures the events report.
#include <cmath>

#if defined(WB_WITH_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "training_run.h"
#include "wb/common/sysinfo.h"
#include "wb/train/compat.h"

namespace wb::train::detail {
using nlohmann::json;

proto::MemoryPart memoryUse(const torch::Device& device) {
  proto::MemoryPart m;
  m.rss = currentRssBytes();
  m.rss_peak = peakRssBytes();
#if defined(WB_WITH_CUDA)
  if (device.is_cuda()) {
    auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    using c10::cuda::CUDACachingAllocator::StatType;
    const auto agg = static_cast<size_t>(StatType::AGGREGATE);
    m.device = "cuda:" + std::to_string(device.index());
    m.alloc = stats.allocated_bytes[agg].current;
    m.reserved = stats.reserved_bytes[agg].current;
    m.peak = stats.allocated_bytes[agg].peak;
    return m;
  }
#endif
  m.device = "cpu";
  m.alloc = m.rss;
  m.reserved = m.rss;
  m.peak = m.rss_peak;
  return m;
}

void resetPeakMemory(const torch::Device& device) {
#if defined(WB_WITH_CUDA)
  if (device.is_cuda()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
    return;
  }
#endif
  resetPeakRss();
}

// Evaluation over this rank's shard of the validation set; sums are reduced across ranks.
EvalResult evaluate(model::Model& m, data::Loader& loader, const torch::Device& device, bool inference, bool bf16,
                    ReplicaGroup& group) {
  Stopwatch sw;
  resetPeakMemory(device);
  m.train(false);
  torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  torch::Tensor correct = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(device));
  int64_t count = 0;
  loader.startEpoch(0);
  auto body = [&](const data::Batch& b) {
    auto x = b.x.to(device, /*non_blocking=*/true);
    auto y = b.y.to(device, /*non_blocking=*/true);
    compat::AutocastGuard autocast(device.type(), torch::kBFloat16, bf16);
    auto logits = m.forward(x).to(torch::kFloat);
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .detach()
                    .to(torch::kDouble);
    correct += logits.argmax(1).eq(y).sum();
    count += b.x.size(0);
  };
  while (auto b = loader.next()) {
    if (inference) {
      torch::InferenceMode guard;
      body(*b);
    } else {
      // What a naive loop does: autograd stays on, so every activation is kept for a backward
      // that never comes.
      body(*b);
    }
  }
  double sums[3] = {loss_sum.item<double>(), static_cast<double>(correct.item<int64_t>()),
                    static_cast<double>(count)};
  group.allReduceSum(sums, 3);
  m.train(true);
  EvalResult r;
  r.samples = static_cast<int64_t>(sums[2]);
  r.loss = sums[2] > 0 ? sums[0] / sums[2] : std::nan("");
  r.acc = sums[2] > 0 ? sums[1] / sums[2] : 0.0;
  r.ms = sw.ms();
  r.mem = memoryUse(device);
  return r;
}

}  // namespace wb::train::detail
