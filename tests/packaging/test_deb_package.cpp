// The .deb as a user gets it: cpack builds it from this build tree into a scratch folder,
// dpkg -x unpacks it into a scratch root, and the unpacked workbench-cli runs from there with a
// bare environment (no build tree on any path, HOME in the scratch folder).
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include "../support/proc.h"

using wb::test::ProcResult;
using wb::test::runProcess;

namespace {

const QString kAppId = QStringLiteral(WB_APP_ID);
const QString kBuiltCli = QStringLiteral(WB_CLI_PATH);

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool isElf(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) && f.read(4) == QByteArray("\x7f" "ELF", 4);
}

// The commands listed under "Commands:" in `workbench-cli --help` (the man pages follow them).
QStringList cliCommands() {
  const auto r = runProcess(kBuiltCli, {QStringLiteral("--help")});
  QStringList commands;
  bool inCommands = false;
  static const QRegularExpression row(QStringLiteral("^  ([a-z][a-z0-9-]*)  +\\S"));
  for (const QString& line : QString::fromUtf8(r.out).split(QLatin1Char('\n'))) {
    if (line.startsWith(QLatin1String("Commands:"))) {
      inCommands = true;
    } else if (inCommands) {
      if (line.isEmpty()) break;
      const auto m = row.match(line);
      if (m.hasMatch()) commands << m.captured(1);
    }
  }
  return commands;
}

// The Debian package that ships `path`. dpkg records each file under one spelling, and with the
// merged /usr a library found at /usr/lib/... may be recorded as /lib/... (or the reverse).
QString owningPackage(const QString& path) {
  QStringList candidates{path, QFileInfo(path).canonicalFilePath()};
  for (const QString& p : QStringList(candidates)) {
    if (p.startsWith(QLatin1String("/usr/"))) candidates << p.mid(4);
    else candidates << QStringLiteral("/usr") + p;
  }
  for (const QString& p : candidates) {
    const auto r = runProcess(QStringLiteral("dpkg"), {QStringLiteral("-S"), p});
    if (r.rc != 0) continue;
    // "diversion by libc6 from: ..." lines (Debian 13's ld-linux) come before the owner's line.
    for (const QString& line : QString::fromUtf8(r.out).split(QLatin1Char('\n')))
      if (!line.startsWith(QLatin1String("diversion by")) && line.contains(QLatin1Char(':')))
        return line.section(QLatin1Char(':'), 0, 0).trimmed();
  }
  return QString();
}

}  // namespace

class TestDebPackage : public QObject {
  Q_OBJECT
  QTemporaryDir scratch_;
  QString deb_;
  QString root_;

  QString inRoot(const QString& rel) const { return root_ + QLatin1Char('/') + rel; }
  QString unpackedCli() const { return inRoot(QStringLiteral("usr/bin/workbench-cli")); }

  QString controlField(const QString& name) const {
    return QString::fromUtf8(runProcess(QStringLiteral("dpkg-deb"), {QStringLiteral("-f"), deb_, name}).out).trimmed();
  }

  // A user's environment, minus everything that could point back into the build tree.
  QProcessEnvironment bareEnv() const {
    QProcessEnvironment env;
    env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/bin:/bin"));
    env.insert(QStringLiteral("HOME"), scratch_.filePath(QStringLiteral("home")));
    env.insert(QStringLiteral("LANG"), QStringLiteral("C.UTF-8"));
    return env;
  }

  QStringList elfFiles() const {
    QStringList files;
    QDirIterator it(root_, QDir::Files | QDir::NoSymLinks, QDirIterator::Subdirectories);
    while (it.hasNext()) {
      const QString f = it.next();
      if (isElf(f)) files << f;
    }
    return files;
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(scratch_.isValid());
    const QString outDir = scratch_.filePath(QStringLiteral("out"));
    const auto pack = runProcess(QStringLiteral(WB_CPACK_COMMAND),
                                 {QStringLiteral("-G"), QStringLiteral("DEB"), QStringLiteral("--config"),
                                  QStringLiteral(WB_BINARY_DIR "/CPackConfig.cmake"), QStringLiteral("-B"), outDir},
                                 240000);
    QVERIFY2(pack.rc == 0, pack.describe().constData());
    const QStringList debs = QDir(outDir).entryList({QStringLiteral("*.deb")}, QDir::Files);
    QCOMPARE(debs.size(), 1);
    deb_ = QDir(outDir).filePath(debs.first());
    root_ = scratch_.filePath(QStringLiteral("root"));
    const auto unpack = runProcess(QStringLiteral("dpkg"), {QStringLiteral("-x"), deb_, root_});
    QVERIFY2(unpack.rc == 0, unpack.describe().constData());
    QVERIFY(QDir().mkpath(scratch_.filePath(QStringLiteral("home"))));
  }

  void controlFields_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("expected");
    const QString arch = QString::fromUtf8(
        runProcess(QStringLiteral("dpkg"), {QStringLiteral("--print-architecture")}).out).trimmed();
    QTest::newRow("Package") << QStringLiteral("Package") << QStringLiteral(WB_PACKAGE_NAME);
    QTest::newRow("Version") << QStringLiteral("Version") << QStringLiteral(WB_PROJECT_VERSION);
    QTest::newRow("Section") << QStringLiteral("Section") << QStringLiteral("science");
    QTest::newRow("Architecture") << QStringLiteral("Architecture") << arch;
    QTest::newRow("Recommends") << QStringLiteral("Recommends") << QStringLiteral("libopenblas0-openmp, dataset-fashion-mnist, librsvg2-bin");
  }
  void controlFields() {
    QFETCH(QString, field);
    QFETCH(QString, expected);
    QCOMPARE(controlField(field), expected);
  }

  void maintainerIsNameAndEmail() {
    static const QRegularExpression form(QStringLiteral("^[^<>]+ <[^@<> ]+@[^@<> ]+>$"));
    const QString m = controlField(QStringLiteral("Maintainer"));
    QVERIFY2(form.match(m).hasMatch(), qPrintable(m));
  }

  // Every library an executable links must come from a package the .deb depends on, or a
  // clean machine's `apt -f install` would leave it unable to start.
  void dependsCoverLinkedLibraries_data() {
    QTest::addColumn<QString>("exe");
    QTest::newRow("workbench-cli") << QStringLiteral("usr/bin/workbench-cli");
    if (WB_HAVE_GUI) QTest::newRow("workbench") << QStringLiteral("usr/bin/workbench");
  }
  void dependsCoverLinkedLibraries() {
    QFETCH(QString, exe);
    QSet<QString> depends;
    for (const QString& alt : controlField(QStringLiteral("Depends")).split(QRegularExpression(QStringLiteral("[,|]"))))
      depends << alt.section(QLatin1Char('('), 0, 0).trimmed();
    QVERIFY(depends.contains(QStringLiteral("libc6")));

    const auto ldd = runProcess(QStringLiteral("ldd"), {inRoot(exe)}, 60000, bareEnv());
    QVERIFY2(ldd.rc == 0, ldd.describe().constData());
    QVERIFY2(!ldd.out.contains("not found"), ldd.out.constData());
    QHash<QString, QString> resolved;  // soname -> path, as the dynamic loader finds it
    // "libfoo.so.1 => /path/libfoo.so.1 (0x..)", and for the loader "/lib64/ld-linux-x86-64.so.2 (0x..)".
    static const QRegularExpression arrow(QStringLiteral("^\\s*(\\S+) => (/\\S+)"));
    static const QRegularExpression bare(QStringLiteral("^\\s*(/\\S+) \\("));
    for (const QString& line : QString::fromUtf8(ldd.out).split(QLatin1Char('\n'))) {
      if (const auto m = arrow.match(line); m.hasMatch()) resolved.insert(m.captured(1), m.captured(2));
      else if (const auto b = bare.match(line); b.hasMatch()) resolved.insert(QFileInfo(b.captured(1)).fileName(), b.captured(1));
    }

    const auto dyn = runProcess(QStringLiteral("readelf"), {QStringLiteral("-d"), QStringLiteral("--wide"), inRoot(exe)});
    QVERIFY2(dyn.rc == 0, dyn.describe().constData());
    static const QRegularExpression needed(QStringLiteral("\\(NEEDED\\)\\s+Shared library: \\[([^\\]]+)\\]"));
    int checked = 0;
    for (auto it = needed.globalMatch(QString::fromUtf8(dyn.out)); it.hasNext(); ++checked) {
      const QString soname = it.next().captured(1);
      QVERIFY2(resolved.contains(soname), qPrintable(soname + QStringLiteral(": not resolved by ldd")));
      const QString package = owningPackage(resolved.value(soname));
      QVERIFY2(!package.isEmpty(), qPrintable(resolved.value(soname) + QStringLiteral(": no Debian package ships it")));
      QVERIFY2(depends.contains(package),
               qPrintable(soname + QStringLiteral(" comes from ") + package + QStringLiteral(", which Depends lacks: ") +
                          QStringList(depends.values()).join(QStringLiteral(", "))));
    }
    QVERIFY(checked > 0);
  }

  void files_data() {
    QTest::addColumn<QString>("installed");
    QTest::addColumn<QString>("source");  // when set, the installed file is a copy of it
    const QString src = QStringLiteral(WB_SOURCE_DIR "/");
    QTest::newRow("cli") << QStringLiteral("usr/bin/workbench-cli") << QString();
    QTest::newRow("cli man page") << QStringLiteral("usr/share/man/man1/workbench-cli.1.gz") << QString();
    // The Python recorder, where Debian's python3 imports it from.
    for (const char* py : {"__init__.py", "recorder.py", "schema.py", "lightning.py"})
      QTest::newRow(py) << QStringLiteral("usr/lib/python3/dist-packages/workbench_recorder/") + QLatin1String(py)
                        << src + QStringLiteral("app/python/workbench_recorder/") + QLatin1String(py);
    // ... and its wheel, for `pip install` into a user's own venv.
    const QString wheel = QStringLiteral(WB_RECORDER_WHEEL);
    if (!wheel.isEmpty())
      QTest::newRow("recorder wheel") << QStringLiteral("usr/share/" WB_PACKAGE_NAME "/python/") + QFileInfo(wheel).fileName()
                                      << wheel;
    if (QFile::exists(src + QStringLiteral("README.md")))
      QTest::newRow("README") << QStringLiteral("usr/share/doc/" WB_PACKAGE_NAME "/README.md") << src + QStringLiteral("README.md");
    // The pages README links to, and its screenshot, beside it.
    for (const char* page : {"docs/cli.md", "docs/glossary.md", "docs/images/tour.png"})
      if (QFile::exists(src + QLatin1String(page)))
        QTest::newRow(page) << QStringLiteral("usr/share/doc/" WB_PACKAGE_NAME "/") + QLatin1String(page) << src + QLatin1String(page);
    if (!WB_HAVE_GUI) return;
    QTest::newRow("gui") << QStringLiteral("usr/bin/workbench") << QString();
    QTest::newRow("gui man page") << QStringLiteral("usr/share/man/man1/workbench.1.gz") << QString();
    QTest::newRow("desktop entry") << QStringLiteral("usr/share/applications/") + kAppId + QStringLiteral(".desktop")
                                   << src + QStringLiteral("resources/desktop/") + kAppId + QStringLiteral(".desktop");
    QTest::newRow("metainfo") << QStringLiteral("usr/share/metainfo/") + kAppId + QStringLiteral(".metainfo.xml")
                              << src + QStringLiteral("resources/desktop/") + kAppId + QStringLiteral(".metainfo.xml");
    QTest::newRow("scalable icon") << QStringLiteral("usr/share/icons/hicolor/scalable/apps/" WB_ICON_NAME ".svg")
                                   << src + QStringLiteral("resources/icons/speedup-workbench.svg");
    for (const QString& s : QStringLiteral(WB_ICON_SIZES).split(QLatin1Char(',')))
      QTest::newRow(qPrintable(QStringLiteral("icon ") + s))
          << QStringLiteral("usr/share/icons/hicolor/%1x%1/apps/" WB_ICON_NAME ".png").arg(s) << QString();
  }
  void files() {
    QFETCH(QString, installed);
    QFETCH(QString, source);
    const QFileInfo fi(inRoot(installed));
    QVERIFY2(fi.isFile() && fi.size() > 0, qPrintable(installed));
    if (installed.startsWith(QLatin1String("usr/bin/"))) QVERIFY(fi.isExecutable());
    if (!source.isEmpty()) QCOMPARE(readAll(fi.filePath()), readAll(source));
  }

  // A desktop entry without the GUI would put a launcher for a missing program in the menu.
  void desktopEntryOnlyWithGui() {
    const bool hasEntry = QFile::exists(inRoot(QStringLiteral("usr/share/applications/") + kAppId + QStringLiteral(".desktop")));
    QCOMPARE(hasEntry, bool(WB_HAVE_GUI));
    QCOMPARE(QFile::exists(inRoot(QStringLiteral("usr/bin/workbench"))), bool(WB_HAVE_GUI));
  }

  // AppStream's check of the installed tree: metainfo, the desktop entry it launches, icons.
  void appstreamTreeValidates() {
    if (!WB_HAVE_GUI) QSKIP("built without the GUI: the package has no desktop entry or metainfo");
    const auto r = runProcess(QStringLiteral("appstreamcli"), {QStringLiteral("validate-tree"), QStringLiteral("--no-net"), root_});
    QVERIFY2(r.rc == 0, r.describe().constData());
  }

  void subcommandManPage_data() {
    QTest::addColumn<QString>("command");
    const QStringList commands = cliCommands();
    QVERIFY(commands.contains(QStringLiteral("run")));
    for (const QString& c : commands) QTest::newRow(qPrintable(c)) << c;
  }
  void subcommandManPage() {
    QFETCH(QString, command);
    const auto help = runProcess(kBuiltCli, {command, QStringLiteral("--help")}, 30000);
    QVERIFY2(help.rc == 0, help.describe().constData());  // help2man makes the page from it
    const QString page = inRoot(QStringLiteral("usr/share/man/man1/workbench-cli-%1.1.gz").arg(command));
    const auto roff = runProcess(QStringLiteral("gzip"), {QStringLiteral("-dc"), page});
    QVERIFY2(roff.rc == 0, roff.describe().constData());
    QVERIFY2(roff.out.contains(".TH WORKBENCH-CLI-" + command.toUpper().toUtf8()), roff.out.left(500).constData());
  }

  void noRpathAndNoBuildTreePaths() {
    const QStringList elves = elfFiles();
    QVERIFY(elves.contains(unpackedCli()));
    for (const QString& f : elves) {
      const auto dyn = runProcess(QStringLiteral("readelf"), {QStringLiteral("-d"), QStringLiteral("--wide"), f});
      QVERIFY2(dyn.rc == 0, dyn.describe().constData());
      QVERIFY2(!dyn.out.contains("(RPATH)") && !dyn.out.contains("(RUNPATH)"),
               qPrintable(f + QStringLiteral(" carries an RPATH:\n") + QString::fromUtf8(dyn.out)));
    }
    // Nor may any data file name the build tree (the man pages are read decompressed). Executables
    // may carry compile-time paths as last-resort fallbacks; the runs below show they use none.
    QDirIterator it(root_, QDir::Files | QDir::NoSymLinks, QDirIterator::Subdirectories);
    while (it.hasNext()) {
      const QString f = it.next();
      if (elves.contains(f)) continue;
      const QByteArray text = f.endsWith(QLatin1String(".gz"))
                                  ? runProcess(QStringLiteral("gzip"), {QStringLiteral("-dc"), f}).out
                                  : readAll(f);
      QVERIFY2(!text.isEmpty(), qPrintable(f));
      QVERIFY2(!text.contains(QByteArrayLiteral(WB_BINARY_DIR)), qPrintable(f + QStringLiteral(" names the build tree")));
    }
  }

  void unpackedCliVersion() {
    const auto unpacked = runProcess(unpackedCli(), {QStringLiteral("--version")}, 30000, bareEnv());
    QVERIFY2(unpacked.rc == 0, unpacked.describe().constData());
    QVERIFY2(unpacked.out.startsWith("workbench-cli " WB_PROJECT_VERSION " ("), unpacked.out.constData());
    const auto built = runProcess(kBuiltCli, {QStringLiteral("--version")});
    QCOMPARE(unpacked.out, built.out);
  }

  // Without a display the GUI hands its arguments to `workbench-cli run` (app/gui/main.cpp). The
  // bare environment leaves it one workbench-cli to find: the one unpacked beside it.
  void unpackedGuiFindsCliBesideItself() {
    if (!WB_HAVE_GUI) QSKIP("built without the GUI");
    const auto r = runProcess(inRoot(QStringLiteral("usr/bin/workbench")), {QStringLiteral("--print-config")}, 60000, bareEnv());
    QVERIFY2(r.rc == 0, r.describe().constData());
    const QJsonObject config = QJsonDocument::fromJson(r.out).object();
    QVERIFY2(config.contains(QStringLiteral("train")), r.out.left(500).constData());
  }

  void unpackedCliShortRun() {
    const QString runsRoot = scratch_.filePath(QStringLiteral("runs"));
    const auto r = runProcess(unpackedCli(),
                              {QStringLiteral("run"), QStringLiteral("--set"), QStringLiteral("data.limit_train=1000"),
                               QStringLiteral("--set"), QStringLiteral("data.limit_val=200"), QStringLiteral("--set"),
                               QStringLiteral("train.max_steps=20"), QStringLiteral("--runs-root"), runsRoot},
                              150000, bareEnv());
    QVERIFY2(r.rc == 0, r.describe().constData());

    const QStringList runs = QDir(runsRoot).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QCOMPARE(runs.size(), 1);
    const QString runDir = runsRoot + QLatin1Char('/') + runs.first();
    const QJsonObject summary = QJsonDocument::fromJson(readAll(runDir + QStringLiteral("/summary.json"))).object();
    QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    // max_steps caps the run; 1000 samples may make a shorter epoch.
    const int steps = summary.value(QStringLiteral("steps")).toInt();
    QVERIFY2(steps >= 1 && steps <= 20, qPrintable(QString::number(steps)));
    const QJsonObject config = QJsonDocument::fromJson(readAll(runDir + QStringLiteral("/config.json"))).object();
    QCOMPARE(config.value(QStringLiteral("train")).toObject().value(QStringLiteral("max_steps")).toInt(), 20);
    const QList<QByteArray> events = readAll(runDir + QStringLiteral("/events.jsonl")).trimmed().split('\n');
    QVERIFY(events.size() >= 2);
    QCOMPARE(QJsonDocument::fromJson(events.first()).object().value(QStringLiteral("type")).toString(), QStringLiteral("run"));
    QCOMPARE(QJsonDocument::fromJson(events.last()).object().value(QStringLiteral("type")).toString(), QStringLiteral("end"));
  }
};

QTEST_APPLESS_MAIN(TestDebPackage)
#include "test_deb_package.moc"
