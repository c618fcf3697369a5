// The one table of run status <-> exit code (docs/runs.md "Exit codes").
#include <QtTest/QtTest>

#include "wb/proto/run_status.h"

class TestRunStatus : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void exitCodeOfStatus_data() {
    QTest::addColumn<QString>("status");
    QTest::addColumn<int>("failedCode");
    QTest::addColumn<int>("code");
    QTest::newRow("ok") << "ok" << 1 << 0;
    QTest::newRow("early-stopped") << "early-stopped" << 1 << 0;
    QTest::newRow("diverged") << "diverged" << 1 << 4;
    QTest::newRow("cancelled") << "cancelled" << 1 << 130;
    QTest::newRow("failed") << "failed" << 1 << 1;
    QTest::newRow("failed: bad config keeps 2") << "failed" << 2 << 2;
    QTest::newRow("failed: data error keeps 3") << "failed" << 3 << 3;
    QTest::newRow("failed: a signal is 1") << "failed" << 137 << 1;
    QTest::newRow("unknown status") << "exploded" << 1 << 1;
  }
  void exitCodeOfStatus() {
    QFETCH(QString, status);
    QFETCH(int, failedCode);
    QFETCH(int, code);
    QCOMPARE(wb::proto::exitCodeForStatus(status.toStdString(), failedCode), code);
  }

  void statusOfExitCode_data() {
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("status");
    QTest::addColumn<bool>("outcome");
    QTest::newRow("0") << 0 << "ok" << true;
    QTest::newRow("4") << 4 << "diverged" << true;
    QTest::newRow("130") << 130 << "cancelled" << true;
    QTest::newRow("1") << 1 << "failed" << false;
    QTest::newRow("2") << 2 << "failed" << false;
    QTest::newRow("3") << 3 << "failed" << false;
    QTest::newRow("137 (SIGKILL)") << 137 << "failed" << false;
  }
  void statusOfExitCode() {
    QFETCH(int, code);
    QFETCH(QString, status);
    QFETCH(bool, outcome);
    QCOMPARE(QString::fromLatin1(wb::proto::statusForExitCode(code)), status);
    QCOMPARE(wb::proto::isOutcomeExitCode(code), outcome);
  }
};

QTEST_APPLESS_MAIN(TestRunStatus)
#include "test_run_status.moc"
