// The docs are part of the product: README fits in a sitting and holds the two commands, every
// link and anchor lands, the glossary defines each term once, docs/cli.md is the binary's --help,
// and every command quoted in an sh block of README.md or docs/*.md runs (docs/development.md,
// "The docs are tested", says how each kind of command is checked).
#include <algorithm>

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

namespace {

const QString kSource = QStringLiteral(WB_SOURCE_DIR);
const QString kCli = QStringLiteral(WB_CLI_PATH);

QString readText(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

// README.md, then docs/*.md, as paths relative to the source tree.
QStringList markdownFiles() {
  QStringList files{QStringLiteral("README.md")};
  const QStringList docs = QDir(kSource + QStringLiteral("/docs")).entryList({QStringLiteral("*.md")}, QDir::Files, QDir::Name);
  for (const QString& d : docs) files << QStringLiteral("docs/") + d;
  return files;
}

struct Quoted {
  int line = 0;  // 1-based, where the command starts
  QString text;  // continuation lines joined
};

// Every command line of the file's ```sh (bash, shell) blocks; comment-only lines are left out.
QList<Quoted> shellCommands(const QString& text) {
  QList<Quoted> out;
  const QStringList lines = text.split(QLatin1Char('\n'));
  bool inShell = false, inFence = false;
  Quoted pending;
  for (int i = 0; i < lines.size(); ++i) {
    const QString trimmed = lines[i].trimmed();
    if (trimmed.startsWith(QLatin1String("```"))) {
      const QString lang = trimmed.mid(3).trimmed();
      inShell = !inFence && (lang == QLatin1String("sh") || lang == QLatin1String("bash") || lang == QLatin1String("shell"));
      inFence = !inFence;
      continue;
    }
    if (!inShell) continue;
    if (pending.text.isEmpty()) {
      if (trimmed.isEmpty() || trimmed.startsWith(QLatin1Char('#'))) continue;
      pending.line = i + 1;
    }
    QString part = lines[i];
    while (part.endsWith(QLatin1Char(' '))) part.chop(1);
    if (part.endsWith(QLatin1Char('\\'))) {
      part.chop(1);
      pending.text += part + QLatin1Char(' ');
      continue;
    }
    pending.text += part;
    out << pending;
    pending = Quoted{};
  }
  return out;
}

// The words of one command line as a POSIX shell splits them (quotes, backslashes), up to a
// comment. Expansions ($VAR, ~, $(...)) are kept as written.
QStringList shellWords(const QString& s) {
  QStringList out;
  QString word;
  bool inWord = false;
  QChar quote;
  for (int i = 0; i < s.size(); ++i) {
    const QChar c = s[i];
    if (!quote.isNull()) {
      if (c == quote) quote = QChar();
      else if (c == QLatin1Char('\\') && quote == QLatin1Char('"') && i + 1 < s.size()) word += s[++i];
      else word += c;
      continue;
    }
    if (c == QLatin1Char('\'') || c == QLatin1Char('"')) {
      quote = c;
      inWord = true;
    } else if (c == QLatin1Char('\\') && i + 1 < s.size()) {
      word += s[++i];
      inWord = true;
    } else if (c.isSpace()) {
      if (inWord) out << word;
      word.clear();
      inWord = false;
    } else if (c == QLatin1Char('#') && !inWord) {
      break;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) out << word;
  return out;
}

// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
QString anchorOf(QString heading) {
  heading = heading.toLower();
  QString out;
  for (const QChar c : heading) {
    if (c.isLetterOrNumber() || c == QLatin1Char('-') || c == QLatin1Char('_')) out += c;
    else if (c == QLatin1Char(' ')) out += QLatin1Char('-');
  }
  return out;
}

// The headings of a markdown text (not the lines of its code blocks), without their #s.
QStringList headings(const QString& text) {
  QStringList out;
  bool inFence = false;
  static const QRegularExpression heading(QStringLiteral("^#{1,6} +(.+?) *$"));
  for (const QString& line : text.split(QLatin1Char('\n'))) {
    if (line.trimmed().startsWith(QLatin1String("```"))) inFence = !inFence;
    if (inFence) continue;
    const auto m = heading.match(line);
    if (m.hasMatch()) out << m.captured(1);
  }
  return out;
}

struct Ran {
  int rc = -1;
  QString out, err;
};

Ran run(const QString& program, const QStringList& args, const QString& cwd, const QStringList& env = {},
        int timeoutMs = 120000) {
  QProcess p;
  p.setWorkingDirectory(cwd);
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  for (const QString& kv : env) e.insert(kv.section(QLatin1Char('='), 0, 0), kv.section(QLatin1Char('='), 1));
  p.setProcessEnvironment(e);
  p.start(program, args);
  Ran r;
  if (!p.waitForStarted(10000)) {
    r.err = QStringLiteral("could not start ") + program + QStringLiteral(": ") + p.errorString();
    return r;
  }
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished(5000);
    r.err = QStringLiteral("did not finish in %1 s").arg(timeoutMs / 1000);
    return r;
  }
  r.rc = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

QString tail(const QString& s) { return s.right(600).trimmed(); }

// The long options a help text names.
QSet<QString> optionsIn(const QString& text) {
  QSet<QString> out;
  static const QRegularExpression option(QStringLiteral("--[A-Za-z0-9][A-Za-z0-9-]*"));
  for (auto it = option.globalMatch(text); it.hasNext();) out.insert(it.next().captured(0));
  return out;
}

QString optionName(const QString& word) { return word.section(QLatin1Char('='), 0, 0); }

// The first option of `words` that `known` lacks ("" when all are known).
QString unknownOption(const QStringList& words, const QSet<QString>& known) {
  for (const QString& w : words)
    if (w.startsWith(QLatin1String("--")) && !known.contains(optionName(w))) return optionName(w);
  return {};
}

bool declaredTarget(const QString& cmakeText, const QString& target) {
  const QRegularExpression re(QStringLiteral("(add_custom_target|add_executable|add_library|wb_add_test|wb_core_library|"
                                             "wb_ui_library)\\(\\s*%1[\\s)]")
                                  .arg(QRegularExpression::escape(target)));
  return re.match(cmakeText).hasMatch();
}

// Every CMakeLists.txt and .cmake file of the source tree (not a build tree), joined.
QString allCmakeText() {
  QString text;
  const QStringList roots{QStringLiteral("."), QStringLiteral("cmake"), QStringLiteral("core"), QStringLiteral("ui"),
                          QStringLiteral("app"), QStringLiteral("tests"), QStringLiteral("packaging"), QStringLiteral("docs")};
  for (const QString& root : roots) {
    QDir dir(kSource + QLatin1Char('/') + root);
    if (root == QLatin1String(".")) {
      text += readText(dir.filePath(QStringLiteral("CMakeLists.txt")));
      continue;
    }
    QDirIterator it(dir.path(), {QStringLiteral("CMakeLists.txt"), QStringLiteral("*.cmake")}, QDir::Files,
                     QDirIterator::Subdirectories);
    while (it.hasNext()) text += readText(it.next());
  }
  return text;
}

}  // namespace

class TestDocs : public QObject {
  Q_OBJECT
  QTemporaryDir work_;
  QHash<QString, Ran> cliHelp_;  // "probe segments" -> its --help

  QStringList cliEnv() const {
    return {QStringLiteral("WB_RUNS_ROOT=") + work_.filePath(QStringLiteral("runs")),
            QStringLiteral("WB_REFERENCES_DIR=") + work_.filePath(QStringLiteral("references")),
            QStringLiteral("WB_NOISE_DIR=") + work_.filePath(QStringLiteral("noise")), QStringLiteral("LC_ALL=C.UTF-8")};
  }

  const Ran& cliHelp(const QStringList& path) {
    const QString key = path.join(QLatin1Char(' '));
    if (!cliHelp_.contains(key)) cliHelp_.insert(key, run(kCli, path + QStringList{QStringLiteral("--help")}, work_.path(), cliEnv()));
    return cliHelp_[key];
  }

  // A workbench-cli command: its options must be ones its --help lists and its --set / --vary
  // values must pass `run --print-config`; then it runs as written when that is quick, with
  // --dry-run where the command has it, else its --help is the run.
  QString checkCli(const QStringList& args, QString* how) {
    static const QRegularExpression subcommand(QStringLiteral("^[a-z][a-z0-9-]*$"));
    QStringList path;
    int i = 0;
    if (args.isEmpty() || (args[0].startsWith(QLatin1Char('-')) && args[0] != QLatin1String("--help") &&
                           args[0] != QLatin1String("--version")))
      path << QStringLiteral("run");
    else
      while (i < args.size() && subcommand.match(args[i]).hasMatch()) path << args[i++];
    const Ran& help = cliHelp(path);
    if (help.rc != 0)
      return QStringLiteral("`workbench-cli %1 --help` failed (%2): %3").arg(path.join(QLatin1Char(' '))).arg(help.rc).arg(tail(help.err));
    const QSet<QString> known = optionsIn(help.out);
    if (const QString bad = unknownOption(args, known); !bad.isEmpty())
      return QStringLiteral("`workbench-cli %1` has no option %2").arg(path.join(QLatin1Char(' ')), bad);

    QStringList sets{QStringLiteral("run"), QStringLiteral("--print-config")};
    for (int k = 0; k < args.size(); ++k) {
      const QString name = optionName(args[k]);
      if (name != QLatin1String("--set") && name != QLatin1String("--vary")) continue;
      const QString value = args[k].contains(QLatin1Char('=')) && args[k].startsWith(name + QLatin1Char('='))
                                ? args[k].mid(name.size() + 1)
                                : (k + 1 < args.size() ? args[k + 1] : QString());
      sets << QStringLiteral("--set") << value;
    }
    if (sets.size() > 2) {
      const Ran r = run(kCli, sets, work_.path(), cliEnv());
      if (r.rc != 0) return QStringLiteral("its settings are refused by `run --print-config`: ") + tail(r.err);
    }

    QStringList toRun = args;
    static const QSet<QString> quick{QStringLiteral("--help"), QStringLiteral("--print-config"),
                                     QStringLiteral("--print-schema"), QStringLiteral("--version")};
    const bool runsQuickly = path == QStringList{QStringLiteral("capabilities")} ||
                             std::any_of(args.begin(), args.end(), [](const QString& a) { return quick.contains(a); });
    if (runsQuickly) {
      *how = QStringLiteral("run as written");
    } else if (known.contains(QStringLiteral("--dry-run"))) {
      if (!toRun.contains(QStringLiteral("--dry-run"))) toRun << QStringLiteral("--dry-run");
      *how = QStringLiteral("run with --dry-run");
    } else {
      *how = QStringLiteral("run with --help");
      return {};
    }
    const Ran r = run(kCli, toRun, work_.path(), cliEnv());
    if (r.rc != 0) return QStringLiteral("exit %1: %2").arg(r.rc).arg(tail(r.err + r.out));
    return {};
  }

  // `bash SCRIPT ARGS`: the script exists and parses, and names each option and variable given.
  QString checkScript(const QString& script, const QStringList& args, const QStringList& envNames, QString* how) {
    const QString path = kSource + QLatin1Char('/') + script;
    if (!QFileInfo::exists(path)) return script + QStringLiteral(" does not exist");
    const Ran r = run(QStringLiteral("bash"), {QStringLiteral("-n"), path}, kSource);
    if (r.rc != 0) return script + QStringLiteral(" does not parse: ") + tail(r.err);
    const QString text = readText(path);
    for (const QString& a : args)
      if (a.startsWith(QLatin1Char('-')) && !text.contains(optionName(a))) return script + QStringLiteral(" takes no ") + a;
    for (const QString& v : envNames)
      if (!text.contains(v)) return script + QStringLiteral(" reads no ") + v;
    *how = QStringLiteral("script parsed, its options and variables found (not run: it builds or runs for minutes)");
    return {};
  }

  // build/tests/<dir>/<bench>: a target of tests/<dir> whose source takes each option given.
  QString checkBench(const QString& program, const QStringList& args, QString* how) {
    const QString name = QFileInfo(program).fileName();
    const QString dir = QFileInfo(program).dir().dirName();  // bench or ui
    if (!declaredTarget(readText(kSource + QStringLiteral("/tests/%1/CMakeLists.txt").arg(dir)), name))
      return name + QStringLiteral(" is not a target of tests/") + dir;
    const QString source = readText(kSource + QStringLiteral("/tests/%1/%2.cpp").arg(dir, name));
    for (const QString& a : args)
      if (a.startsWith(QLatin1String("--")) && !source.contains(QLatin1Char('"') + optionName(a) + QLatin1Char('"')))
        return name + QStringLiteral(" takes no ") + a;
    *how = QStringLiteral("benchmark target and options found (not run: benchmarks take minutes)");
    return {};
  }

  QString checkCmake(const QStringList& args, QString* how) {
    const QString cmake = allCmakeText();
    for (int i = 0; i < args.size(); ++i) {
      if (args[i].startsWith(QLatin1String("-D"))) {
        const QString var = args[i].mid(2).section(QLatin1Char('='), 0, 0);
        if (!var.startsWith(QLatin1String("CMAKE_")) && !cmake.contains(QStringLiteral("option(") + var + QLatin1Char(' ')))
          return QStringLiteral("no CMake option ") + var;
      } else if (args[i] == QLatin1String("--target")) {
        for (int k = i + 1; k < args.size() && !args[k].startsWith(QLatin1Char('-')); ++k)
          if (!declaredTarget(cmake, args[k])) return QStringLiteral("no CMake target ") + args[k];
      }
    }
    *how = QStringLiteral("options and targets found in the CMake files (not run: it configures or builds)");
    return {};
  }

  QString checkGui(const QStringList& args, QString* how) {
#ifdef WB_GUI_PATH
    const Ran help = run(QStringLiteral(WB_GUI_PATH), {QStringLiteral("--help")}, work_.path(), {QStringLiteral("QT_QPA_PLATFORM=offscreen")});
    if (help.rc != 0) return QStringLiteral("`workbench --help` failed: ") + tail(help.err);
    if (const QString bad = unknownOption(args, optionsIn(help.out)); !bad.isEmpty()) return QStringLiteral("workbench has no option ") + bad;
    *how = QStringLiteral("run with --help, offscreen");
    return {};
#else
    Q_UNUSED(args);
    *how = QStringLiteral("skipped: built without the window");
    return {};
#endif
  }

  // One quoted command, by the program it runs; `how` says how it was checked.
  QString check(const QString& text, QString* how) {
    QStringList words = shellWords(text);
    QStringList envNames;
    static const QRegularExpression assignment(QStringLiteral("^([A-Z_][A-Z0-9_]*)="));
    while (!words.isEmpty() && (assignment.match(words[0]).hasMatch() || words[0] == QLatin1String("sudo"))) {
      if (words[0] != QLatin1String("sudo")) envNames << assignment.match(words[0]).captured(1);
      words.removeFirst();
    }
    if (words.isEmpty()) return QStringLiteral("no command");
    const QString program = words.takeFirst();
    auto isCli = [](const QString& w) { return w == QLatin1String("workbench-cli") || w.endsWith(QLatin1String("/workbench-cli")); };
    if (isCli(program)) return checkCli(words, how);
    if (program == QLatin1String("workbench") || program.endsWith(QLatin1String("/gui/workbench"))) return checkGui(words, how);
    if (program == QLatin1String("torchrun") || program == QLatin1String("srun")) {
      const auto at = std::find_if(words.begin(), words.end(), isCli);
      if (at == words.end()) return program + QStringLiteral(" runs no workbench-cli");
      const QString error = checkCli(QStringList(at + 1, words.end()), how);
      *how = QStringLiteral("its workbench-cli part ") + *how + QStringLiteral(" (") + program + QStringLiteral(" needs a cluster)");
      return error;
    }
    if (program == QLatin1String("export")) {
      const Ran r = run(QStringLiteral("bash"), {QStringLiteral("-n"), QStringLiteral("-c"), text}, kSource);
      *how = QStringLiteral("parsed by bash (it sets variables)");
      return r.rc == 0 ? QString() : QStringLiteral("does not parse: ") + tail(r.err);
    }
    if (program == QLatin1String("bash") || program == QLatin1String("sh")) {
      if (words.isEmpty()) return QStringLiteral("bash runs no script");
      return checkScript(words[0], words.mid(1), envNames, how);
    }
    if (program.startsWith(QLatin1String("build/tests/"))) return checkBench(program, words, how);
    if (program == QLatin1String("cmake")) return checkCmake(words, how);
    return QStringLiteral("test_docs does not know how to check `%1`: teach it, or quote the command outside an sh block").arg(program);
  }

 private Q_SLOTS:
  void initTestCase() { QVERIFY(work_.isValid()); }

  void readmeFitsASitting() {
    const QString readme = readText(kSource + QStringLiteral("/README.md"));
    const int lines = readme.count(QLatin1Char('\n'));
    QVERIFY2(lines <= 200, qPrintable(QStringLiteral("README.md has %1 lines; it must fit in a sitting (200): move the rest to docs/").arg(lines)));
    QStringList commands;
    for (const Quoted& q : shellCommands(readme)) commands << shellWords(q.text).join(QLatin1Char(' '));
    QCOMPARE(commands, (QStringList{QStringLiteral("bash packaging/start.sh"), QStringLiteral("bash .ci/run")}));
    static const QRegularExpression image(QStringLiteral("!\\[[^\\]]*\\]\\(([^)\\s]+\\.png)\\)"));
    const auto m = image.match(readme);
    QVERIFY2(m.hasMatch(), "README.md shows no screenshot of the tour");
    const QFileInfo shot(kSource + QLatin1Char('/') + m.captured(1));
    QVERIFY2(shot.exists(), qPrintable(m.captured(1) + QStringLiteral(" does not exist")));
    QVERIFY2(shot.size() < 200 * 1024, qPrintable(QStringLiteral("%1 is %2 KB: keep it under 200").arg(m.captured(1)).arg(shot.size() / 1024)));
    QFile png(shot.filePath());
    QVERIFY(png.open(QIODevice::ReadOnly));
    QCOMPARE(png.read(8), QByteArray("\x89PNG\r\n\x1a\n", 8));
  }

  void linksResolve() {
    static const QRegularExpression link(QStringLiteral("\\]\\(([^)\\s]+)\\)"));
    for (const QString& file : markdownFiles()) {
      const QString text = readText(kSource + QLatin1Char('/') + file);
      const QString dir = QFileInfo(kSource + QLatin1Char('/') + file).absolutePath();
      for (auto it = link.globalMatch(text); it.hasNext();) {
        const QString target = it.next().captured(1);
        if (target.contains(QLatin1String("://")) || target.startsWith(QLatin1String("mailto:"))) continue;
        const QString path = target.section(QLatin1Char('#'), 0, 0);
        const QString anchor = target.section(QLatin1Char('#'), 1);
        const QString resolved = path.isEmpty() ? kSource + QLatin1Char('/') + file : QDir(dir).filePath(path);
        QVERIFY2(QFileInfo::exists(resolved), qPrintable(file + QStringLiteral(": link to a missing file: ") + target));
        if (anchor.isEmpty()) continue;
        QStringList anchors;
        for (const QString& h : headings(readText(resolved))) anchors << anchorOf(h);
        QVERIFY2(anchors.contains(anchor), qPrintable(file + QStringLiteral(": no heading for the anchor of ") + target));
      }
    }
  }

  // Each term the tool must use, defined once (docs/glossary.md), under its own heading.
  void glossaryDefinesTheTerms() {
    const QStringList defined = headings(readText(kSource + QStringLiteral("/docs/glossary.md")));
    const char* const terms[] = {"by parts",     "bound",          "keeps the math",   "slowed alike",    "contended",
                                 "within noise", "pair",           "reference runs",   "target",          "time to target",
                                 "interval",     "false-alarm rate", "power",          "verdict",         "smallest effect",
                                 "speedup",      "baseline",       "variant",          "throughput",      "kept, dropped",
                                 "cannot be faster", "segments",   "math check",       "noise band",      "a/a check"};
    for (const char* t : terms) {
      const QString term = QString::fromUtf8(t);
      const auto n = std::count_if(defined.begin(), defined.end(), [&](const QString& h) { return h.toLower() == term; });
      QVERIFY2(n == 1, qPrintable(QStringLiteral("docs/glossary.md defines \"%1\" %2 times (once: a heading of its own)").arg(term).arg(n)));
    }
    QCOMPARE(QSet<QString>(defined.begin(), defined.end()).size(), defined.size());
  }

  void cliReferenceMatchesHelp() {
    const QString committed = kSource + QStringLiteral("/docs/cli.md");
    const QString written = work_.filePath(QStringLiteral("cli.md"));
    const Ran r = run(QStringLiteral(WB_CMAKE_COMMAND),
                      {QStringLiteral("-DCLI=") + kCli, QStringLiteral("-DDOC=") + committed, QStringLiteral("-DOUT=") + written,
                       QStringLiteral("-P"), kSource + QStringLiteral("/cmake/CliReference.cmake")},
                      work_.path());
    QVERIFY2(r.rc == 0, qPrintable(tail(r.err + r.out)));
    const QStringList want = readText(written).split(QLatin1Char('\n'));
    const QStringList have = readText(committed).split(QLatin1Char('\n'));
    for (int i = 0; i < std::max(want.size(), have.size()); ++i) {
      const QString w = i < want.size() ? want[i] : QStringLiteral("(end of file)");
      const QString h = i < have.size() ? have[i] : QStringLiteral("(end of file)");
      QVERIFY2(w == h, qPrintable(QStringLiteral("docs/cli.md line %1 differs from workbench-cli --help:\n  help: %2\n  file: %3\n"
                                                 "Run `cmake --build build --target cli-reference` and commit docs/cli.md.")
                                      .arg(i + 1).arg(w, h)));
    }
  }

  void commands_data() {
    QTest::addColumn<QString>("command");
    int count = 0;
    for (const QString& file : markdownFiles())
      for (const Quoted& q : shellCommands(readText(kSource + QLatin1Char('/') + file))) {
        QTest::newRow(qPrintable(QStringLiteral("%1:%2").arg(file).arg(q.line))) << q.text.simplified();
        ++count;
      }
    QVERIFY2(count > 40, "the docs quote fewer commands than they did: is the sh block parser broken?");
  }

  void commands() {
    QFETCH(QString, command);
    QString how;
    const QString error = check(command, &how);
    QVERIFY2(error.isEmpty(), qPrintable(command + QStringLiteral("\n  ") + error));
    qInfo("%s: %s", qPrintable(how), qPrintable(command.left(100)));
  }
};

QTEST_APPLESS_MAIN(TestDocs)
#include "test_docs.moc"
