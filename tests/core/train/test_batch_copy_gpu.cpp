// BatchCopier on a GPU: pinned batches are copied on a side stream, the compute stream waits for
// them (its kernels see the whole batch), the current stream is left as it was, and a pageable
// batch is copied on the compute stream. Skips with the reason without a CUDA device.
#include <QtTest/QtTest>

#include <torch/torch.h>

#if defined(WB_WITH_CUDA)
#include <c10/cuda/CUDAStream.h>
#endif

#include "wb/train/batch_copy.h"
#include "../../support/machine_torch.h"

class TestBatchCopyGpu : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
#if !defined(WB_WITH_CUDA)
    QSKIP("this build's LibTorch has no CUDA: the side-stream copy is not compiled in");
#endif
    WB_NEED(wb::test::missingCuda());
  }

#if defined(WB_WITH_CUDA)
  void pinnedBatchesArriveWholeForTheComputeStream() {
    const torch::Device dev(torch::kCUDA, 0);
    wb::train::BatchCopier copier(dev, /*pinned=*/true);
    QVERIFY(copier.sideStream());
    const auto before = c10::cuda::getCurrentCUDAStream(0);
    for (int i = 0; i < 20; ++i) {
      // Large enough that a copy not waited for would still be in flight when the sum runs.
      auto x = torch::full({64, 3, 128, 128}, static_cast<float>(i + 1)).pin_memory();
      auto y = torch::full({64}, static_cast<int64_t>(i), torch::kLong).pin_memory();
      auto [dx, dy] = copier.toDevice(x, y);
      QVERIFY(dx.is_cuda() && dy.is_cuda());
      QCOMPARE(c10::cuda::getCurrentCUDAStream(0), before);
      const double sum = dx.sum().item<double>();
      QCOMPARE(sum, static_cast<double>(i + 1) * static_cast<double>(x.numel()));
      QCOMPARE(dy.sum().item<int64_t>(), static_cast<int64_t>(64 * i));
    }
  }

  void pageableBatchesAreCopiedToo() {
    wb::train::BatchCopier copier(torch::Device(torch::kCUDA, 0), /*pinned=*/false);
    QVERIFY(!copier.sideStream());
    auto x = torch::arange(12, torch::kFloat).reshape({3, 4});
    auto y = torch::arange(3, torch::kLong);
    auto [dx, dy] = copier.toDevice(x, y);
    QVERIFY(torch::equal(dx.cpu(), x));
    QVERIFY(torch::equal(dy.cpu(), y));
  }
#endif
};

QTEST_APPLESS_MAIN(TestBatchCopyGpu)
#include "test_batch_copy_gpu.moc"
