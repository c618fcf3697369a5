// Evaluation over the validation split, and the memory figures the events report.
#include <cmath>

#include "training_run.h"
#include "wb/common/sysinfo.h"
#include "wb/train/compat.h"
#include "wb/train/evaluation.h"

namespace wb::train::detail {
using nlohmann::json;

proto::MemoryPart memoryUse(const torch::Device& device) {
  proto::MemoryPart m;
  m.rss = currentRssBytes();
  m.rss_peak = peakRssBytes();
  if (device.is_cuda()) {
    const compat::CudaMemory cuda = compat::cudaMemory(device.index());
    m.device = "cuda:" + std::to_string(device.index());
    m.alloc = cuda.allocated;
    m.reserved = cuda.reserved;
    m.peak = cuda.peak;
    return m;
  }
  m.device = "cpu";
  m.alloc = m.rss;
  m.reserved = m.rss;
  m.peak = m.rss_peak;
  return m;
}

void resetPeakMemory(const torch::Device& device) {
  if (device.is_cuda()) {
    compat::resetCudaPeakMemory(device.index());
    return;
  }
  resetPeakRss();
}

// Evaluation over this rank's shard of the validation set; sums are reduced across ranks, the
// unreadable samples too: past what the whole split allows, every rank throws data::DataError.
EvalResult evaluate(model::Model& m, data::Loader& loader, BatchCopier& copier, const torch::Device& device,
                    bool inference, bool bf16, ReplicaGroup& group) {
  Stopwatch sw;
  resetPeakMemory(device);
  const EvalSums pass = evaluatePass(m, loader, copier, device, inference, bf16);
  double sums[4] = {pass.loss_sum, static_cast<double>(pass.correct), static_cast<double>(pass.samples),
                    static_cast<double>(loader.badThisEpoch())};
  group.allReduceSum(sums, 4);
  loader.judgeUnreadable(static_cast<int64_t>(std::llround(sums[3])));
  EvalResult r;
  r.samples = static_cast<int64_t>(sums[2]);
  r.loss = sums[2] > 0 ? sums[0] / sums[2] : std::nan("");
  r.acc = sums[2] > 0 ? sums[1] / sums[2] : 0.0;
  r.ms = sw.ms();
  r.mem = memoryUse(device);
  return r;
}

}  // namespace wb::train::detail

namespace wb::train {

EvalSums evaluatePass(model::Model& m, data::Loader& loader, BatchCopier& copier, const torch::Device& device,
                      bool inference, bool bf16) {
  m.train(false);
  torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  torch::Tensor correct = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(device));
  int64_t count = 0;
  loader.startEpoch(0);
  auto body = [&](const data::Batch& b) {
    auto [x, y] = copier.toDevice(b.x, b.y);
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
  EvalSums sums{loss_sum.item<double>(), correct.item<int64_t>(), count};  // waits for the device
  m.train(true);
  return sums;
}

}  // namespace wb::train
