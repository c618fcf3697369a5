// The loader's pinned path on a machine with CUDA: images and labels both land in page-locked
// memory (a pageable label tensor would make the trainer's non_blocking copy synchronous).
// Skips with the reason without a CUDA device.
#include <QtTest/QtTest>

#include <torch/torch.h>

#include "data_test_util.h"
#include "wb/data/loader.h"
#include "../../support/machine_torch.h"

class TestLoaderGpu : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void pinnedBatchesHoldImagesAndLabels_data() {
    QTest::addColumn<int>("workers");
    QTest::newRow("in the loop") << 0;
    QTest::newRow("2 workers") << 2;
  }
  void pinnedBatchesHoldImagesAndLabels() {
    WB_NEED(wb::test::missingCuda());
    QFETCH(int, workers);
    wb::data::LoaderOptions o;
    o.batch_size = 16;
    o.workers = workers;
    o.pin_memory = true;
    wb::data::Loader loader(std::make_shared<datatest::GeneratedDataset>(64, 1, 8, 8), o);
    QVERIFY(loader.pinMemoryActive());
    loader.startEpoch(0);
    int batches = 0;
    while (auto b = loader.next()) {
      QVERIFY(b->x.is_pinned());
      QVERIFY(b->y.is_pinned());
      ++batches;
    }
    QCOMPARE(batches, 4);
  }
};

QTEST_APPLESS_MAIN(TestLoaderGpu)
#include "test_loader_gpu.moc"
