// Path rules shared by the CLI and the window: a run folder must have a valid UTF-8 name, since
// runs record it in JSON (which would turn other bytes into U+FFFD, naming no folder).
#include <QtTest/QtTest>

#include "wb/common/paths.h"

class TestPaths : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void utf8_data() {
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<int>("badAt");  // -1: valid
    QTest::newRow("ascii") << QByteArray("/tmp/runs/x") << -1;
    QTest::newRow("utf-8 e-acute") << QByteArray("/tmp/caf\xC3\xA9") << -1;
    QTest::newRow("utf-8 emoji") << QByteArray("/tmp/\xF0\x9F\x9A\x80") << -1;
    QTest::newRow("latin-1 e-acute") << QByteArray("/tmp/x\xE9") << 6;
    QTest::newRow("cut sequence") << QByteArray("/tmp/\xC3") << 5;
    QTest::newRow("overlong slash") << QByteArray("/tmp/\xC0\xAF") << 5;
    QTest::newRow("surrogate") << QByteArray("/tmp/\xED\xA0\x80") << 5;
    QTest::newRow("past U+10FFFF") << QByteArray("/\xF4\x90\x80\x80") << 1;
  }
  void utf8() {
    QFETCH(QByteArray, path);
    QFETCH(int, badAt);
    const std::string p = path.toStdString();
    const auto at = wb::invalidUtf8At(p);
    QCOMPARE(at ? int(*at) : -1, badAt);
    const auto st = wb::requireUtf8Path("--run-dir", p);
    QCOMPARE(st.ok(), badAt < 0);
    if (st.ok()) return;
    QCOMPARE(int(st.error().code), int(wb::Errc::InvalidConfig));
    const std::string& msg = st.error().message;
    QVERIFY2(msg.rfind("--run-dir ", 0) == 0, msg.c_str());
    QVERIFY2(msg.find("must be valid UTF-8") != std::string::npos, msg.c_str());
    QVERIFY2(!wb::invalidUtf8At(msg), "the message itself must be valid UTF-8");
  }
};

QTEST_APPLESS_MAIN(TestPaths)
#include "test_paths.moc"
