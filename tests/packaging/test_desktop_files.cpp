// The desktop entry and AppStream metainfo in resources/desktop validate with Debian's own
// validators and agree with each other and the icons; the icons rendered from the SVG have
// their sizes. (The .deb test checks that these files are what gets installed.)
#include <QFile>
#include <QImage>
#include <QStandardPaths>
#include <QTest>
#include <QXmlStreamReader>

#include "../support/proc.h"

using wb::test::runProcess;

namespace {

const QString kDesktopDir = QStringLiteral(WB_SOURCE_DIR "/resources/desktop/");
const QString kAppId = QStringLiteral(WB_APP_ID);

QString desktopPath() { return kDesktopDir + kAppId + QStringLiteral(".desktop"); }
QString metainfoPath() { return kDesktopDir + kAppId + QStringLiteral(".metainfo.xml"); }

QString tool(const char* name, const char* package) {
  const QString path = QStandardPaths::findExecutable(QString::fromLatin1(name));
  if (path.isEmpty())
    qWarning("%s not found: install the Debian package %s (packaging/setup.sh does)", name, package);
  return path;
}

// Key=value of the [Desktop Entry] group (the only group the file has).
QString desktopKey(const QString& key) {
  QFile f(desktopPath());
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return QString();
  const QByteArray prefix = key.toUtf8() + '=';
  while (!f.atEnd()) {
    const QByteArray line = f.readLine().trimmed();
    if (line.startsWith(prefix)) return QString::fromUtf8(line.mid(prefix.size()));
  }
  return QString();
}

// Text of the first element named `name` (or its attribute `attr`) in the metainfo.
QString metainfoValue(const QString& name, const QString& attr = QString()) {
  QFile f(metainfoPath());
  if (!f.open(QIODevice::ReadOnly)) return QString();
  QXmlStreamReader xml(&f);
  while (!xml.atEnd()) {
    if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == name)
      return attr.isEmpty() ? xml.readElementText() : xml.attributes().value(attr).toString();
  }
  return QString();
}

// AppStream before 1.0 (Debian 12's 0.16) does not know the <developer> element that 1.0
// (Debian 13) requires in place of <developer_name>: the one line either version may print.
bool predatesDeveloperTag(const QString& validator, const QString& line) {
  static const bool old = runProcess(validator, {QStringLiteral("--version")}).all().contains(QLatin1String("version: 0."));
  return old && line.contains(QLatin1String("unknown-tag developer"));
}

}  // namespace

class TestDesktopFiles : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void desktopEntryValidates() {
    const QString validator = tool("desktop-file-validate", "desktop-file-utils");
    QVERIFY(!validator.isEmpty());
    const auto r = runProcess(validator, {desktopPath()});
    // It exits 0 on warnings and hints too: a clean file prints nothing at all.
    QVERIFY2(r.rc == 0 && r.all().trimmed().isEmpty(), r.describe().constData());
  }

  void metainfoValidates() {
    const QString validator = tool("appstreamcli", "appstream");
    QVERIFY(!validator.isEmpty());
    const auto r = runProcess(validator, {QStringLiteral("validate"), QStringLiteral("--no-net"), metainfoPath()});
    QVERIFY2(r.rc == 0, r.describe().constData());
    // Errors (E:) fail the exit code; warnings (W:) and infos (I:) must not creep in either.
    for (const QString& line : r.all().split(QLatin1Char('\n')))
      QVERIFY2(!line.startsWith(QLatin1String("W:")) &&
                   (!line.startsWith(QLatin1String("I:")) || predatesDeveloperTag(validator, line)),
               qPrintable(line));
  }

  void idsAgree_data() {
    QTest::addColumn<QString>("actual");
    QTest::addColumn<QString>("expected");
    QTest::newRow("metainfo id") << metainfoValue(QStringLiteral("id")) << kAppId;
    QTest::newRow("launchable desktop id")
        << metainfoValue(QStringLiteral("launchable")) << kAppId + QStringLiteral(".desktop");
    QTest::newRow("launchable type") << metainfoValue(QStringLiteral("launchable"), QStringLiteral("type"))
                                     << QStringLiteral("desktop-id");
    QTest::newRow("desktop Icon") << desktopKey(QStringLiteral("Icon")) << QStringLiteral(WB_ICON_NAME);
    QTest::newRow("desktop Exec") << desktopKey(QStringLiteral("Exec")) << QStringLiteral("workbench");
    QTest::newRow("newest release is the project version")
        << metainfoValue(QStringLiteral("release"), QStringLiteral("version")) << QStringLiteral(WB_PROJECT_VERSION);
    QTest::newRow("name") << desktopKey(QStringLiteral("Name")) << metainfoValue(QStringLiteral("name"));
  }
  void idsAgree() {
    QFETCH(QString, actual);
    QFETCH(QString, expected);
    QVERIFY(!expected.isEmpty());
    QCOMPARE(actual, expected);
  }

  void renderedIcon_data() {
    QTest::addColumn<int>("size");
    for (const QString& s : QStringLiteral(WB_ICON_SIZES).split(QLatin1Char(',')))
      QTest::newRow(qPrintable(s + QLatin1Char('x') + s)) << s.toInt();
  }
  void renderedIcon() {
    QFETCH(int, size);
    const QString path = QStringLiteral(WB_ICON_BUILD_DIR "/%1x%1/apps/" WB_ICON_NAME ".png").arg(size);
    if (!QFile::exists(path) && QStandardPaths::findExecutable(QStringLiteral("rsvg-convert")).isEmpty())
      QSKIP("rsvg-convert (librsvg2-bin) is not installed, so the PNG icons were not rendered");
    QImage img(path);
    QVERIFY2(!img.isNull(), qPrintable(path));
    QCOMPARE(img.size(), QSize(size, size));
    QVERIFY(img.hasAlphaChannel());
    // Transparent corners (the rounded square), an opaque body: a real render, not a blank.
    QCOMPARE(qAlpha(img.pixel(0, 0)), 0);
    QCOMPARE(qAlpha(img.pixel(size / 2, size / 2)), 255);
  }
};

QTEST_APPLESS_MAIN(TestDesktopFiles)
#include "test_desktop_files.moc"
