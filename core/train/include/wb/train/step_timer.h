#pragma once
// Splits each training step's wall time into data / h2d / fwd / bwd / comm / opt.
// Phases are consecutive intervals of one clock, so they add up to the step time exactly
// (bookkeeping after the optimiser counts as opt).
// On CPU every step is timed (ops are synchronous). On CUDA, kernels run asynchronously, so a
// sampled step (setSampled(true): one per log interval) synchronises at each boundary and its
// proportions are applied to the interval's average step time; other steps are not slowed.
#include <array>
#include <string>

#include <torch/torch.h>

#include "wb/common/clock.h"
#include "wb/proto/event_types.h"

namespace wb::train {

class StepTimer {
 public:
  enum Phase { Data = 0, H2D, Fwd, Bwd, Comm, Opt, kPhases };

  explicit StepTimer(torch::Device device) : cuda_(device.is_cuda()) {}
  void setSampled(bool sampled) { sampled_ = sampled; }
  void begin() { last_ = clock_.ms(); }
  void mark(Phase p) {
    if (cuda_ && sampled_) syncDevice();
    const double now = clock_.ms();
    const double d = now - last_;
    last_ = now;
    total_ += d;
    if (!cuda_ || sampled_) sums_[p] += d;
  }
  void reset() {
    sums_.fill(0.0);
    total_ = 0.0;
    last_ = clock_.ms();
  }
  double totalMs() const { return total_; }
  // Average ms per step of each phase over `steps` steps (the step event's ms).
  proto::StepPhases averages(int64_t steps) const {
    double measured = 0;
    for (double v : sums_) measured += v;
    const double scale = (cuda_ && measured > 0) ? total_ / measured : 1.0;
    auto mean = [&](Phase p) { return steps > 0 ? sums_[p] * scale / static_cast<double>(steps) : 0.0; };
    proto::StepPhases ms;
    ms.data = mean(Data);
    ms.h2d = mean(H2D);
    ms.fwd = mean(Fwd);
    ms.bwd = mean(Bwd);
    ms.comm = mean(Comm);
    ms.opt = mean(Opt);
    return ms;
  }

 private:
  static void syncDevice() {
    if (torch::cuda::is_available()) torch::cuda::synchronize();
  }
  bool cuda_;
  bool sampled_ = false;
  Stopwatch clock_;
  std::array<double, kPhases> sums_{};
  double total_ = 0.0;
  double last_ = 0.0;
};

}  // namespace wb::train
