#include "wb/train/host_speed.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "wb/common/clock.h"

namespace wb::train {

namespace {
constexpr int kValues = 16384;  // 64 KiB of floats: in cache, so it times the core, not memory
constexpr int kPasses = 96;
constexpr int kRepeats = 5;
}  // namespace

// A plain single-threaded loop, not a LibTorch kernel: a kernel on the run's intra-op threads
// measured the thread team (2 threads on a core shared with another process ran 27x slower than
// 1 thread), not the host's speed.
double timeHostKernel() {
  std::vector<float> x(kValues);
  for (int i = 0; i < kValues; ++i) x[i] = 1.0f + static_cast<float>(i % 97) * 1e-4f;
  volatile float sink = 0;
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r <= kRepeats; ++r) {  // r = 0: the untimed warm-up
    Stopwatch sw;
    float acc = 0;
    for (int p = 0; p < kPasses; ++p)
      for (int i = 0; i < kValues; ++i) acc = acc * 0.999f + x[i];
    sink = sink + acc;
    if (r > 0) best = std::min(best, sw.seconds() * 1000.0);
  }
  return best;
}

}  // namespace wb::train
