// The CLI's argument reader: typed integer options are range-checked and name the option.
#include <QtTest/QtTest>

#include "args.h"

using wb::cli::Args;

class TestArgs : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void getInt_data() {
    QTest::addColumn<QString>("value");  // empty: option absent
    QTest::addColumn<bool>("ok");
    QTest::addColumn<qlonglong>("expected");
    QTest::newRow("absent") << QString() << true << 300LL;
    QTest::newRow("in range") << "60" << true << 60LL;
    QTest::newRow("max") << "86400" << true << 86400LL;
    QTest::newRow("letters") << "abc" << false << 0LL;
    QTest::newRow("trailing junk") << "30s" << false << 0LL;
    QTest::newRow("float") << "1e3" << false << 0LL;
    QTest::newRow("empty") << "=" << false << 0LL;
    QTest::newRow("zero below min") << "0" << false << 0LL;
    QTest::newRow("above max") << "86401" << false << 0LL;
    QTest::newRow("past int64") << "99999999999999999999" << false << 0LL;
    QTest::newRow("leading space") << " 5" << false << 0LL;
  }
  void getInt() {
    QFETCH(QString, value);
    QFETCH(bool, ok);
    QFETCH(qlonglong, expected);
    std::vector<std::string> argv;
    if (value == QLatin1String("=")) argv = {"--collective-timeout="};
    else if (!value.isNull()) argv = {"--collective-timeout", value.toStdString()};
    Args args(argv, {}, {"collective-timeout"});
    QVERIFY(args.ok());
    auto r = args.getInt("collective-timeout", 300, 1, 86400);
    QCOMPARE(r.ok(), ok);
    if (ok) {
      QCOMPARE(qlonglong(*r), expected);
      return;
    }
    QCOMPARE(int(r.error().code), int(wb::Errc::InvalidConfig));
    const std::string& msg = r.error().message;
    QVERIFY2(msg.rfind("--collective-timeout", 0) == 0, msg.c_str());
    QVERIFY2(msg.find("1..86400") != std::string::npos, msg.c_str());
  }
};

QTEST_APPLESS_MAIN(TestArgs)
#include "test_args.moc"
