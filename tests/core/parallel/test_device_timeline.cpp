// The overlap statistic's rule (overlapShare), used with host times on Gloo and with CUDA event
// times on NCCL (test_communicator_gpu checks the device figures).
#include <QtTest/QtTest>

#include "wb/parallel/data_parallel.h"

class TestDeviceTimeline : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void overlapShare_data() {
    QTest::addColumn<double>("first");
    QTest::addColumn<double>("backwardEnd");
    QTest::addColumn<double>("lastDone");
    QTest::addColumn<double>("share");
    QTest::newRow("all hidden: done as backward ends") << 0.0 << 10.0 << 10.0 << 1.0;
    QTest::newRow("done before backward ends") << 2.0 << 10.0 << 6.0 << 1.0;
    QTest::newRow("half exposed") << 0.0 << 5.0 << 10.0 << 0.5;
    QTest::newRow("all after backward") << 10.0 << 10.0 << 14.0 << 0.0;
    QTest::newRow("launched after backward's end") << 12.0 << 10.0 << 14.0 << 0.0;
    QTest::newRow("empty window") << 3.0 << 5.0 << 3.0 << 0.0;
    QTest::newRow("done before launch (clock skew)") << 3.0 << 5.0 << 2.0 << 0.0;
  }
  void overlapShare() {
    QFETCH(double, first);
    QFETCH(double, backwardEnd);
    QFETCH(double, lastDone);
    QFETCH(double, share);
    QCOMPARE(wb::parallel::overlapShare(first, backwardEnd, lastDone), share);
  }
};

QTEST_APPLESS_MAIN(TestDeviceTimeline)
#include "test_device_timeline.moc"
