// BatchCopier without a GPU: on the CPU a batch is used as it is (no copy), and the side stream
// exists only for pinned batches on a CUDA device (test_batch_copy_gpu runs that path).
#include <QtTest/QtTest>

#include <torch/torch.h>

#include "wb/train/batch_copy.h"

class TestBatchCopy : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void cpuUsesTheBatchAsItIs() {
    wb::train::BatchCopier copier(torch::Device(torch::kCPU), /*pinned=*/false);
    QVERIFY(!copier.sideStream());
    auto x = torch::rand({4, 1, 8, 8});
    auto y = torch::arange(4, torch::kLong);
    auto [dx, dy] = copier.toDevice(x, y);
    QCOMPARE(dx.data_ptr(), x.data_ptr());
    QCOMPARE(dy.data_ptr(), y.data_ptr());
  }

  void sideStreamOnlyForPinnedBatchesOnCuda_data() {
    QTest::addColumn<bool>("cuda");
    QTest::addColumn<bool>("pinned");
    QTest::addColumn<bool>("side");
    QTest::newRow("cuda, pinned") << true << true << true;
    QTest::newRow("cuda, pageable") << true << false << false;
    QTest::newRow("cpu, pinned asked") << false << true << false;
    QTest::newRow("cpu") << false << false << false;
  }
  void sideStreamOnlyForPinnedBatchesOnCuda() {
    QFETCH(bool, cuda);
    QFETCH(bool, pinned);
    QFETCH(bool, side);
    // Constructing touches no device: this runs on any machine.
    wb::train::BatchCopier copier(cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU), pinned);
    QCOMPARE(copier.sideStream(), side);
  }
};

QTEST_APPLESS_MAIN(TestBatchCopy)
#include "test_batch_copy.moc"
