#include "wb/train/host_speed.h"

#include <algorithm>
#include <limits>

#include <torch/torch.h>

#include "wb/common/clock.h"

namespace wb::train {

namespace {
constexpr int64_t kSize = 192;
constexpr int kProducts = 8;
constexpr int kRepeats = 5;
}  // namespace

double timeHostKernel() {
  torch::NoGradGuard noGrad;
  // Fixed values, not the run's RNG: the check must not change what the run draws.
  const auto a = torch::linspace(-1.0, 1.0, kSize * kSize, torch::kFloat32).reshape({kSize, kSize});
  const auto b = a.transpose(0, 1).contiguous();
  torch::Tensor c = torch::mm(a, b);  // warm-up
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < kRepeats; ++r) {
    Stopwatch sw;
    for (int i = 0; i < kProducts; ++i) c = torch::mm(a, b);
    (void)c.data_ptr<float>()[0];
    best = std::min(best, sw.seconds() * 1000.0);
  }
  return best;
}

}  // namespace wb::train
