// EarlyStopping: scripted validation curves stop at exactly best + patience (Lightning's
// rules), min_delta, mode max, a non-finite value, the stopping threshold, disabled; the state
// survives a checkpoint round trip.
#include <QtTest/QtTest>

#include <cmath>
#include <limits>

#include "wb/common/early_stopping.h"

namespace {

const double kNan = std::numeric_limits<double>::quiet_NaN();

struct Outcome {
  int stop_epoch = -1;
  QList<int> improved;
  std::string reason;
};

Outcome feed(wb::EarlyStopping& es, const QList<double>& values, int first_epoch = 0) {
  Outcome o;
  for (int i = 0; i < values.size(); ++i) {
    const int epoch = first_epoch + i;
    auto d = es.update(epoch, values[i]);
    if (d.improved) o.improved.push_back(epoch);
    if (d.stop) {
      o.stop_epoch = epoch;
      o.reason = d.reason;
      break;
    }
    if (!d.reason.empty()) o.reason = d.reason;  // a reason without stopping is a bug
  }
  return o;
}

wb::EarlyStoppingConfig config(const QString& monitor, int patience, double min_delta = 0.0,
                               bool check_finite = true, double threshold = 0.0) {
  wb::EarlyStoppingConfig c;
  c.monitor = monitor.toStdString();
  c.mode = monitor == QLatin1String("val_acc") ? "max" : "min";
  c.patience = patience;
  c.min_delta = min_delta;
  c.check_finite = check_finite;
  c.stopping_threshold = threshold;
  return c;
}

}  // namespace

class TestEarlyStopping : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void scriptedCurves_data() {
    QTest::addColumn<QString>("monitor");
    QTest::addColumn<int>("patience");
    QTest::addColumn<double>("min_delta");
    QTest::addColumn<bool>("check_finite");
    QTest::addColumn<double>("threshold");
    QTest::addColumn<QList<double>>("values");
    QTest::addColumn<int>("stop_epoch");       // -1: runs to the end
    QTest::addColumn<QList<int>>("improved");  // epochs that became the best
    QTest::addColumn<QString>("reason");       // substring of the stop reason

    QTest::newRow("loss stops at best + patience")
        << "val_loss" << 3 << 0.0 << true << 0.0
        << QList<double>{1.0, 0.8, 0.7, 0.75, 0.72, 0.71, 0.5} << 5 << QList<int>{0, 1, 2}
        << "val_loss did not improve by more than 0 for 3 evaluations (best 0.7 at epoch 2)";
    QTest::newRow("equal value is no improvement")
        << "val_loss" << 2 << 0.0 << true << 0.0
        << QList<double>{0.9, 0.5, 0.5, 0.5, 0.1} << 3 << QList<int>{0, 1} << "for 2 evaluations";
    QTest::newRow("patience 1")
        << "val_loss" << 1 << 0.0 << true << 0.0
        << QList<double>{0.9, 0.8, 0.85, 0.1} << 2 << QList<int>{0, 1} << "at epoch 1";
    QTest::newRow("accuracy, mode max")
        << "val_acc" << 2 << 0.0 << true << 0.0
        << QList<double>{0.5, 0.6, 0.65, 0.64, 0.66, 0.66, 0.6, 0.9} << 6
        << QList<int>{0, 1, 2, 4} << "val_acc did not improve";
    QTest::newRow("min_delta hides small gains")
        << "val_loss" << 3 << 0.1 << true << 0.0
        << QList<double>{1.0, 0.95, 0.93, 0.92, 0.5} << 3 << QList<int>{0}
        << "by more than 0.1 for 3 evaluations (best 1 at epoch 0)";
    QTest::newRow("gain beyond min_delta resets the wait")
        << "val_loss" << 2 << 0.1 << true << 0.0
        << QList<double>{1.0, 0.85, 0.8, 0.7, 0.69, 0.68, 0.1} << 5 << QList<int>{0, 1, 3}
        << "(best 0.7 at epoch 3)";
    QTest::newRow("min_delta in mode max")
        << "val_acc" << 2 << 0.05 << true << 0.0
        << QList<double>{0.5, 0.56, 0.6, 0.6, 0.9} << 3 << QList<int>{0, 1} << "best 0.56";
    QTest::newRow("nan stops with check_finite")
        << "val_loss" << 5 << 0.0 << true << 0.0
        << QList<double>{1.0, 0.9, kNan, 0.5} << 2 << QList<int>{0, 1} << "is not finite";
    QTest::newRow("inf stops with check_finite")
        << "val_loss" << 5 << 0.0 << true << 0.0
        << QList<double>{1.0, INFINITY, 0.5} << 1 << QList<int>{0} << "val_loss = inf";
    QTest::newRow("nan without check_finite is just no gain")
        << "val_loss" << 2 << 0.0 << false << 0.0
        << QList<double>{1.0, kNan, kNan, 0.1} << 2 << QList<int>{0} << "for 2 evaluations";
    QTest::newRow("threshold stops, best is that epoch")
        << "val_loss" << 10 << 0.0 << true << 0.35
        << QList<double>{1.0, 0.6, 0.3, 0.2} << 2 << QList<int>{0, 1, 2} << "stopping threshold < 0.35";
    QTest::newRow("threshold in mode max")
        << "val_acc" << 10 << 0.0 << true << 0.9
        << QList<double>{0.5, 0.8, 0.9, 0.91, 0.95} << 3 << QList<int>{0, 1, 2, 3} << "> 0.9";
    QTest::newRow("improving all along never stops")
        << "val_loss" << 2 << 0.0 << true << 0.0
        << QList<double>{1.0, 0.9, 0.8, 0.7} << -1 << QList<int>{0, 1, 2, 3} << "";
    QTest::newRow("patience 0 is off but tracks the best")
        << "val_loss" << 0 << 0.0 << true << 0.5
        << QList<double>{1.0, 0.4, 2.0, 3.0, kNan, 4.0} << -1 << QList<int>{0, 1} << "";
  }
  void scriptedCurves() {
    QFETCH(QString, monitor);
    QFETCH(int, patience);
    QFETCH(double, min_delta);
    QFETCH(bool, check_finite);
    QFETCH(double, threshold);
    QFETCH(QList<double>, values);
    QFETCH(int, stop_epoch);
    QFETCH(QList<int>, improved);
    QFETCH(QString, reason);

    wb::EarlyStopping es(config(monitor, patience, min_delta, check_finite, threshold));
    QCOMPARE(es.enabled(), patience > 0);
    auto o = feed(es, values);
    QCOMPARE(o.stop_epoch, stop_epoch);
    QCOMPARE(o.improved, improved);
    QCOMPARE(es.bestEpoch(), improved.last());
    QCOMPARE(es.bestValue(), values[improved.last()]);
    const QString got = QString::fromStdString(o.reason);
    if (reason.isEmpty())
      QVERIFY2(got.isEmpty(), qPrintable(got));
    else
      QVERIFY2(got.contains(reason), qPrintable(got));
  }

  // A run resumed from a checkpoint must stop where the uninterrupted run stops.
  void stateRoundTrip_data() {
    QTest::addColumn<int>("split");
    for (int split = 0; split <= 5; ++split)
      QTest::newRow(qPrintable(QStringLiteral("resume after %1").arg(split))) << split;
  }
  void stateRoundTrip() {
    QFETCH(int, split);
    const QList<double> values{1.0, 0.8, 0.9, 0.7, 0.75, 0.74, 0.73, 0.2};
    const auto cfg = config(QStringLiteral("val_loss"), 3);

    wb::EarlyStopping whole(cfg);
    const auto expected = feed(whole, values);
    QCOMPARE(expected.stop_epoch, 6);

    wb::EarlyStopping first(cfg);
    feed(first, values.mid(0, split));
    wb::EarlyStopping resumed(cfg);
    resumed.loadState(first.state());
    QCOMPARE(resumed.waitCount(), first.waitCount());
    const auto rest = feed(resumed, values.mid(split), split);
    QCOMPARE(rest.stop_epoch, expected.stop_epoch);
    QCOMPARE(rest.reason, expected.reason);
    QCOMPARE(resumed.bestEpoch(), 3);
    QCOMPARE(resumed.bestValue(), 0.7);
  }
};

QTEST_APPLESS_MAIN(TestEarlyStopping)
#include "test_early_stopping.moc"
