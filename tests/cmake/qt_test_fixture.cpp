// A Qt Test binary for test_run_qt_test: WB_FIXTURE says what each function does, e.g.
// "first=skip,second=fail" (a function not named passes).
#include <QtTest/QtTest>

namespace {

QString actionOf(const char* function) {
  for (const QString& part : qEnvironmentVariable("WB_FIXTURE").split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    const auto kv = part.split(QLatin1Char('='));
    if (kv.size() == 2 && kv[0] == QLatin1String(function)) return kv[1];
  }
  return QStringLiteral("pass");
}

}  // namespace

class Fixture : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void first() { act("first"); }
  void second() { act("second"); }

 private:
  void act(const char* function) {
    const QString what = actionOf(function);
    if (what == QLatin1String("skip")) QSKIP("told to skip");
    if (what == QLatin1String("fail")) QFAIL("told to fail");
    if (what == QLatin1String("crash")) std::abort();
    QVERIFY(true);
  }
};

QTEST_APPLESS_MAIN(Fixture)
#include "qt_test_fixture.moc"
