// cmake/run_qt_test.sh under a real CTest, registered as wb_add_test registers every test (the
// runner, SKIP_RETURN_CODE): a failing function fails the test whatever else skips; a binary
// reads as Skipped only when every function skipped; a crash fails.
#include <QtTest/QtTest>

#include <QTemporaryDir>

#include "../support/proc.h"

class TestRunQtTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void outcomeUnderCTest_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("outcome");
    QTest::newRow("both pass") << QString() << QStringLiteral("Passed");
    QTest::newRow("one skips, one passes") << QStringLiteral("first=skip") << QStringLiteral("Passed");
    QTest::newRow("both skip") << QStringLiteral("first=skip,second=skip") << QStringLiteral("Skipped");
    QTest::newRow("one skips, one fails") << QStringLiteral("first=skip,second=fail") << QStringLiteral("Failed");
    QTest::newRow("one fails, one skips") << QStringLiteral("first=fail,second=skip") << QStringLiteral("Failed");
    QTest::newRow("one skips, one crashes") << QStringLiteral("first=skip,second=crash") << QStringLiteral("Failed");
  }
  void outcomeUnderCTest() {
    QFETCH(QString, fixture);
    QFETCH(QString, outcome);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile f(dir.filePath(QStringLiteral("CTestTestfile.cmake")));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QStringLiteral("add_test(fixture \"bash\" \"%1\" \"60\" \"%2\")\n"
                           "set_tests_properties(fixture PROPERTIES SKIP_RETURN_CODE %3 ENVIRONMENT \"WB_FIXTURE=%4\")\n")
                .arg(QStringLiteral(WB_RUN_QT_TEST), QStringLiteral(WB_QT_TEST_FIXTURE))
                .arg(WB_ALL_SKIPPED_RC)
                .arg(fixture)
                .toUtf8());
    f.close();
    const auto r = wb::test::runProcess(QStringLiteral(WB_CTEST), {QStringLiteral("--test-dir"), dir.path()}, 60000);
    QVERIFY2(r.rc >= 0, r.describe().constData());
    const QRegularExpression line(QStringLiteral("Test +#1: fixture \\.+[ *]*(\\w+)"));
    const auto m = line.match(QString::fromUtf8(r.out));
    QVERIFY2(m.hasMatch(), r.describe().constData());
    QCOMPARE(m.captured(1), outcome);
    QCOMPARE(r.rc, outcome == QLatin1String("Failed") ? 8 : 0);  // ctest: 8 when a test failed
  }
};

QTEST_GUILESS_MAIN(TestRunQtTest)
#include "test_run_qt_test.moc"
