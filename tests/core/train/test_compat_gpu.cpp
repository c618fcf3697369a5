// The CUDA caching allocator's figures through compat (the step and eval events' mem): a tensor
// shows in allocated and reserved, the peak stays after it is freed and resets. Skips with the
// reason without a CUDA device; a build without CUDA refuses the call.
#include <QtTest/QtTest>

#include <torch/torch.h>

#include "wb/train/compat.h"
#include "../../support/machine_torch.h"

class TestCompatGpu : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void cpuBuildRefuses() {
#if defined(WB_WITH_CUDA)
    QSKIP("a CUDA build: the refusal is for builds without CUDA");
#else
    QVERIFY_THROWS_EXCEPTION(std::logic_error, wb::compat::cudaMemory(0));
#endif
  }

  void allocatorFiguresFollowATensor() {
    WB_NEED(wb::test::missingCuda());
    wb::compat::resetCudaPeakMemory(0);
    const auto start = wb::compat::cudaMemory(0);
    const int64_t bytes = int64_t{64} << 20;
    {
      auto t = torch::empty({bytes / 4}, torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA, 0));
      const auto held = wb::compat::cudaMemory(0);
      QVERIFY(held.allocated >= start.allocated + bytes);
      QVERIFY(held.reserved >= held.allocated);
      QVERIFY(held.peak >= held.allocated);
    }
    const auto freed = wb::compat::cudaMemory(0);
    QVERIFY(freed.allocated < start.allocated + bytes);
    QVERIFY(freed.peak >= start.allocated + bytes);  // the peak remembers
    wb::compat::resetCudaPeakMemory(0);
    QVERIFY(wb::compat::cudaMemory(0).peak < start.allocated + bytes);
  }
};

QTEST_APPLESS_MAIN(TestCompatGpu)
#include "test_compat_gpu.moc"
