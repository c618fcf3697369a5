// The window's command line as a user runs it (offscreen): --grab saves the window, at --size,
// as a PNG and quits; a size that is none is refused, naming the option, before any window.
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

namespace {

struct Ended {
  int code = -1;
  QString err;
};

Ended runGui(const QStringList& args, const QString& runsRoot) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
  env.insert(QStringLiteral("XDG_CONFIG_HOME"), runsRoot + QStringLiteral("/config"));  // no saved set-up of the user's
  p.setProcessEnvironment(env);
  p.start(QStringLiteral(WB_GUI_PATH), QStringList{QStringLiteral("--fresh"), QStringLiteral("--runs-root"), runsRoot} + args);
  if (!p.waitForFinished(90000)) {
    p.kill();
    p.waitForFinished();
    return {-1, QStringLiteral("did not quit")};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromLocal8Bit(p.readAllStandardError())};
}

}  // namespace

class TestGuiMain : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void grabSavesTheWindowAtItsSizeAndQuits() {
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("window.png"));
    const Ended e = runGui({QStringLiteral("--size"), QStringLiteral("1024x700"), QStringLiteral("--grab"), png}, dir.path());
    QVERIFY2(e.code == 0, qPrintable(e.err));
    const QImage image(png);
    QVERIFY2(!image.isNull(), "no PNG written");
    QCOMPARE(image.size() / image.devicePixelRatio(), QSize(1024, 700));
  }

  void aSizeThatIsNoneIsRefused() {
    QTemporaryDir dir;
    const Ended e = runGui({QStringLiteral("--size"), QStringLiteral("big"), QStringLiteral("--grab"), dir.filePath(QStringLiteral("x.png"))},
                           dir.path());
    QCOMPARE(e.code, 2);
    QVERIFY2(e.err.contains(QStringLiteral("--size big")), qPrintable(e.err));
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("x.png"))));
  }
};

QTEST_GUILESS_MAIN(TestGuiMain)
#include "test_gui_main.moc"
