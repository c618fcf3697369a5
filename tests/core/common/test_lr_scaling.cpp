// optim.lr_scaling's rule (wb/common/lr_scaling.h): the factor for each mode and device count,
// the warm-up's length and ramp, and that one device or "none" changes nothing.
#include <QtTest/QtTest>

#include <cmath>

#include "wb/common/lr_scaling.h"

class TestLrScaling : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void factorAndWarmup_data() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<int>("devices");
    QTest::addColumn<double>("warmup");       // optim.lr_scaling_warmup
    QTest::addColumn<qint64>("totalSteps");
    QTest::addColumn<double>("factor");
    QTest::addColumn<qint64>("warmupSteps");
    QTest::newRow("none, 4 devices") << "none" << 4 << 0.05 << qint64(100) << 1.0 << qint64(0);
    QTest::newRow("linear, 1 device") << "linear" << 1 << 0.05 << qint64(100) << 1.0 << qint64(0);
    QTest::newRow("linear, 2 devices") << "linear" << 2 << 0.05 << qint64(100) << 2.0 << qint64(5);
    QTest::newRow("linear, 8 devices, 10 % warm-up") << "linear" << 8 << 0.1 << qint64(300) << 8.0 << qint64(30);
    QTest::newRow("sqrt, 4 devices") << "sqrt" << 4 << 0.05 << qint64(100) << 2.0 << qint64(5);
    QTest::newRow("sqrt, 2 devices") << "sqrt" << 2 << 0.05 << qint64(100) << std::sqrt(2.0) << qint64(5);
    QTest::newRow("warm-up is at least one step") << "linear" << 2 << 0.0 << qint64(100) << 2.0 << qint64(1);
    QTest::newRow("a short run still warms up") << "linear" << 2 << 0.05 << qint64(15) << 2.0 << qint64(1);
  }
  void factorAndWarmup() {
    QFETCH(QString, mode);
    QFETCH(int, devices);
    QFETCH(double, warmup);
    QFETCH(qint64, totalSteps);
    QFETCH(double, factor);
    QFETCH(qint64, warmupSteps);
    wb::OptimConfig o;
    o.lr = 0.01;
    o.lr_scaling = mode.toStdString();
    o.lr_scaling_warmup = warmup;
    const auto s = wb::lrScaling(o, devices, totalSteps);
    QCOMPARE(s.factor, factor);
    QCOMPARE(s.effective_lr, 0.01 * factor);
    QCOMPARE(qint64(s.warmup_steps), warmupSteps);
    // The ramp: 1 + (factor − 1)·(step + 1)/W, then the factor.
    if (warmupSteps > 0) {
      QCOMPARE(wb::lrScalingFactorAt(s, 0), 1.0 + (factor - 1.0) / double(warmupSteps));
      QCOMPARE(wb::lrScalingFactorAt(s, warmupSteps - 1), factor);
    }
    QCOMPARE(wb::lrScalingFactorAt(s, totalSteps), factor);
    // The note says the effective lr and why.
    const QString note = QString::fromStdString(s.note);
    QVERIFY2(note.contains(QStringLiteral("optim.lr 0.01")), s.note.c_str());
    if (factor > 1) QVERIFY2(note.contains(mode + QStringLiteral(" scaling for ") + QString::number(devices) + QStringLiteral(" devices")), s.note.c_str());
  }
  // optim.lr_base_batch: the rule scales for the global batch against the one the lr was tuned for
  // (devices × batch_size / base), and warms up only when the factor grows.
  void batchRatio() {
    wb::OptimConfig o;
    o.lr = 0.01;
    o.lr_scaling = "linear";
    o.lr_base_batch = 64;
    auto s = wb::lrScaling(o, 2, 100, 128);
    QCOMPARE(s.factor, 4.0);
    QVERIFY(s.warmup_steps > 0);
    QVERIFY2(QString::fromStdString(s.note).contains(QStringLiteral("lr_base_batch")), s.note.c_str());
    o.lr_scaling = "sqrt";
    QCOMPARE(wb::lrScaling(o, 1, 100, 256).factor, 2.0);
    QCOMPARE(wb::lrScaling(o, 1, 100, 64).factor, 1.0);  // the batch it was tuned for
    QCOMPARE(wb::lrScaling(o, 1, 100, 0).factor, 1.0);   // batch unknown: no ratio
    o.lr_base_batch = 0;
    QCOMPARE(wb::lrScaling(o, 1, 100, 256).factor, 1.0);  // no base: train.batch_size is the base
  }
  void label() {
    wb::OptimConfig o;
    o.lr = 0.01;
    QCOMPARE(QString::fromStdString(wb::lrScalingLabel(wb::lrScaling(o, 2, 0))), QStringLiteral("0.01"));
    o.lr_scaling = "linear";
    QCOMPARE(QString::fromStdString(wb::lrScalingLabel(wb::lrScaling(o, 2, 0))), QStringLiteral("0.02 (linear \u00d72)"));
  }
};

QTEST_APPLESS_MAIN(TestLrScaling)
#include "test_lr_scaling.moc"
