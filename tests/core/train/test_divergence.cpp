// The advice a diverged run gets never names the precision it already runs in.
#include <QtTest/QtTest>

#include "wb/train/divergence.h"

class TestDivergence : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void advice_data() {
    QTest::addColumn<QString>("precision");
    QTest::addColumn<QString>("advice");
    QTest::newRow("32-true") << "32-true" << "lower optim.lr (the run already uses 32-true precision)";
    QTest::newRow("bf16-mixed") << "bf16-mixed" << "lower optim.lr, or use 32-true precision";
    QTest::newRow("16-mixed") << "16-mixed" << "lower optim.lr, or use bf16-mixed or 32-true precision";
  }
  void advice() {
    QFETCH(QString, precision);
    QFETCH(QString, advice);
    const QString got = QString::fromStdString(wb::train::divergenceAdvice(precision.toStdString()));
    QCOMPARE(got, advice);
    QVERIFY2(!got.contains(QStringLiteral("use ") + precision), qPrintable(got));
  }
};

QTEST_APPLESS_MAIN(TestDivergence)
#include "test_divergence.moc"
