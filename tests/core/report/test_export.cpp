// Every export format read back: CSV by an RFC 4180 parser, JSON parsed, LaTeX environments
// balanced and special characters escaped, HTML and SVG well-formed (every tag closed), Markdown
// rows aligned; atomic writes and unwritable paths.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "report_fixture.h"
#include "wb/render/escape.h"
#include "wb/report/export.h"

using fixture::FakeRun;
using nlohmann::json;
using namespace wb::records;
using namespace wb::report;
using namespace wb::render;

namespace {

const std::string kWeird = "we,ird \"name\" 50% _#$&~^\\ <b>x</b>\nline2";

// RFC 4180: fields separated by commas, records by CRLF; quoted fields may hold , " CR LF with
// quotes doubled. Returns false on a malformed document.
bool parseCsv(const std::string& s, std::vector<std::vector<std::string>>& out) {
  std::vector<std::string> row;
  std::string field;
  size_t i = 0;
  bool quoted = false, fieldStarted = false;
  while (i < s.size()) {
    char c = s[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < s.size() && s[i + 1] == '"') field += '"', i += 2;
        else quoted = false, ++i;
      } else {
        field += c, ++i;
      }
      continue;
    }
    if (c == '"') {
      if (fieldStarted && !field.empty()) return false;  // quote inside an unquoted field
      quoted = true, fieldStarted = true, ++i;
    } else if (c == ',') {
      row.push_back(field), field.clear(), fieldStarted = false, ++i;
    } else if (c == '\r') {
      if (i + 1 >= s.size() || s[i + 1] != '\n') return false;
      row.push_back(field), field.clear(), fieldStarted = false;
      out.push_back(row), row.clear();
      i += 2;
    } else if (c == '\n') {
      return false;  // bare LF outside quotes
    } else {
      field += c, fieldStarted = true, ++i;
    }
  }
  if (quoted) return false;
  if (fieldStarted || !row.empty()) row.push_back(field), out.push_back(row);
  return true;
}

// Every element closed, in order. Skips <!DOCTYPE>, comments; "<x/>" closes itself.
bool wellFormed(const std::string& doc, QString& why) {
  std::vector<std::string> stack;
  size_t i = 0;
  while ((i = doc.find('<', i)) != std::string::npos) {
    if (doc.compare(i, 4, "<!--") == 0) {
      i = doc.find("-->", i);
      if (i == std::string::npos) return why = QStringLiteral("unclosed comment"), false;
      continue;
    }
    size_t end = doc.find('>', i);
    if (end == std::string::npos) return why = QStringLiteral("unclosed tag"), false;
    std::string tag = doc.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty() || tag[0] == '!' || tag[0] == '?') continue;
    if (tag[0] == '/') {
      std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name)
        return why = QStringLiteral("</%1> closes <%2>").arg(QString::fromStdString(name),
                                                                 stack.empty() ? QString() : QString::fromStdString(stack.back())),
               false;
      stack.pop_back();
      continue;
    }
    if (tag.back() == '/') continue;
    stack.push_back(tag.substr(0, tag.find_first_of(" \t\n")));
  }
  if (!stack.empty()) return why = QStringLiteral("<%1> never closed").arg(QString::fromStdString(stack.back())), false;
  return true;
}

Report sampleReport(QTemporaryDir& dir) {
  FakeRun base = fixture::twoEpochRun(10, 0.70, 20, 0.80, 640);
  base.env = {{"host", {{"name", "testhost"}, {"cpu", "Test CPU & co"}, {"cores", 4}}}, {"versions", {{"libtorch", "1.13.0"}}}};
  base.end("ok", 21);
  FakeRun fast = fixture::twoEpochRun(5, 0.75, 10, 0.85, 1280);
  fast.set("name", kWeird).set("model.name", kWeird).set("speedups.workers", 2);  // a weird value "differs" lists
  fast.end("ok", 11);
  FakeRun slow = fixture::twoEpochRun(10, 0.60, 20, 0.78, 640);
  slow.end("ok", 22);
  auto b = loadRun(base.write(dir.path(), QStringLiteral("base")));
  auto f = loadRun(fast.write(dir.path(), QStringLiteral("fast")));
  auto s = loadRun(slow.write(dir.path(), QStringLiteral("slow")));
  return buildComparisonReport(*b, {*f, *s}, std::nullopt);
}

std::string slurp(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int countOf(const std::string& s, const std::string& needle) {
  int n = 0;
  for (size_t i = s.find(needle); i != std::string::npos; i = s.find(needle, i + needle.size())) ++n;
  return n;
}

}  // namespace

class TestExport : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void csvReadsBackExactly() {
    QTemporaryDir dir;
    Report r = sampleReport(dir);
    std::vector<std::vector<std::string>> rows;
    QVERIFY(parseCsv(renderCsv(r.tables[0]), rows));
    QCOMPARE(int(rows.size()), 4);  // header + baseline + 2 runs
    for (const auto& row : rows) QCOMPARE(row.size(), r.tables[0].columns.size());
    QCOMPARE(QString::fromStdString(rows[0][0]), QStringLiteral("Run"));
    // The weird run's "differs" cell (its model.name) holds commas, quotes and a newline and comes
    // back whole; "differs" lists settings, not the name.
    bool found = false;
    for (const auto& cell : rows[2]) found = found || cell.find(kWeird) != std::string::npos;
    QVERIFY(found);
    // Numbers are exact, not display text; "not reached" stays text.
    int ttt = -1;
    for (size_t i = 0; i < rows[0].size(); ++i)
      if (rows[0][i].rfind("Time to", 0) == 0) ttt = int(i);
    QVERIFY(ttt >= 0);
    QCOMPARE(std::stod(rows[2][ttt]), 7.5);
    QCOMPARE(QString::fromStdString(rows[3][ttt]), QStringLiteral("not reached"));
    // Every figure is named for what it measures, with its unit.
    const std::vector<std::string>& head = rows[0];
    for (const char* title : {"Train samples/s (1/s)", "Eval s (s)", "First step s (s)", "Run wall s (s)", "Wall time (s)"})
      QVERIFY2(std::find(head.begin(), head.end(), title) != head.end(), title);
    QVERIFY(std::find(head.begin(), head.end(), "Samples/s (1/s)") == head.end());
  }

  void jsonParses() {
    QTemporaryDir dir;
    Report r = sampleReport(dir);
    json doc = json::parse(renderJson(r));
    QCOMPARE(int(doc["tables"][0]["rows"].size()), 3);
    const json& runs = doc["comparison"]["runs"];
    QCOMPARE(int(runs.size()), 3);
    QVERIFY(runs[0]["baseline"].get<bool>());
    QCOMPARE(runs[1]["speedup"]["to_target"].get<double>(), 20.0 / 7.5);
    QCOMPARE(runs[1]["train_samples_per_s"].get<double>(), 1280.0);
    QCOMPARE(QString::fromStdString(runs[1]["train_samples_per_s_source"].get<std::string>()), QStringLiteral("summary"));
    QVERIFY(!runs[1].contains("samples_per_s"));
    QVERIFY(!runs[1]["speedups_contended"].get<bool>());
    QVERIFY(runs[2]["time_to_target_s"].is_null());
    QVERIFY(!runs[2]["reached_target"].get<bool>());
    QCOMPARE(QString::fromStdString(doc["machine"]["host.cpu"].get<std::string>()), QStringLiteral("Test CPU & co"));
    QVERIFY(!doc["advice"].empty());
  }

  void latexBalancedAndEscaped() {
    QTemporaryDir dir;
    const std::string tex = renderLatex(sampleReport(dir));
    std::vector<std::string> stack;
    std::regex env("\\\\(begin|end)\\{([a-z*]+)\\}");
    for (auto it = std::sregex_iterator(tex.begin(), tex.end(), env); it != std::sregex_iterator(); ++it) {
      if ((*it)[1] == "begin") {
        stack.push_back((*it)[2]);
      } else {
        QVERIFY2(!stack.empty() && stack.back() == (*it)[2], (*it)[0].str().c_str());
        stack.pop_back();
      }
    }
    QVERIFY(stack.empty());
    QVERIFY(tex.find("\\toprule") != std::string::npos && tex.find("\\bottomrule") != std::string::npos);
    QVERIFY(tex.find("we,ird \"name\" 50\\% \\_\\#\\$\\&\\textasciitilde{}\\textasciicircum{}\\textbackslash{} "
                     "\\textless{}b\\textgreater{}x") != std::string::npos);
    QVERIFY(tex.find("50% ") == std::string::npos);
    QVERIFY(tex.find("×") == std::string::npos);  // Unicode signs become math
    QVERIFY(tex.find("$\\times$") != std::string::npos);
    // Column separators: each body row of the main table has columns-1 unescaped &.
    const size_t cols = sampleReport(dir).tables[0].columns.size();
    std::regex unescapedAmp("(^|[^\\\\])&");
    size_t start = tex.find("\\midrule\n") + 9;
    std::string firstRow = tex.substr(start, tex.find("\\\\\n", start) - start);
    auto n = std::distance(std::sregex_iterator(firstRow.begin(), firstRow.end(), unescapedAmp), std::sregex_iterator());
    QCOMPARE(size_t(n), cols - 1);
  }

  void htmlWellFormedAndSelfContained() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("report.html"));
    Report r = sampleReport(dir);
    auto st = writeReport(r, Format::Html, path.toStdString());
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());
    const std::string html = slurp(path);
    QString why;
    QVERIFY2(wellFormed(html, why), qPrintable(why));
    QCOMPARE(countOf(html, "<svg"), 3);          // speedup bars, loss and accuracy, inline
    QVERIFY(html.find("src=\"http") == std::string::npos && html.find("href=\"http") == std::string::npos);
    QVERIFY(html.find("&lt;b&gt;x&lt;/b&gt;") != std::string::npos);  // the weird name escaped
    QVERIFY(html.find("<b>x</b>") == std::string::npos);
    QVERIFY(html.find("Config differences") != std::string::npos);
    QVERIFY(html.find("Advisor") != std::string::npos);
    QVERIFY(html.find("testhost") != std::string::npos);  // env.json
    if (QFile::exists(QStringLiteral("/usr/bin/xmllint"))) {
      const std::string cmd = "/usr/bin/xmllint --noout '" + path.toStdString() + "' 2>&1";
      QCOMPARE(std::system(cmd.c_str()), 0);
    }
  }

  void markdownRowsAligned() {
    QTemporaryDir dir;
    Report r = sampleReport(dir);
    const std::string md = renderMarkdown(r);
    std::istringstream in(md);
    std::string line;
    int tableLines = 0;
    const int pipes = int(r.tables[0].columns.size()) + 1;
    bool inMain = false;
    while (std::getline(in, line)) {
      if (line.rfind("## Runs against", 0) == 0) inMain = true;
      else if (line.rfind("## ", 0) == 0) inMain = false;
      if (!inMain || line.empty() || line[0] != '|') continue;
      ++tableLines;
      int n = 0;
      for (size_t i = 0; i < line.size(); ++i)
        if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++n;
      QCOMPARE(n, pipes);
    }
    QCOMPARE(tableLines, 2 + 3);
    QVERIFY(md.find(kWeird) == std::string::npos);  // the newline inside was flattened
  }

  void svgChartsWellFormed() {
    BarChartSpec spec;
    spec.title = "Ladder <&>";
    spec.bars = {{"baseline", 1.0, "1.00×", false}, {"+ workers", 1.8, "1.80×", false}, {"+ pin memory", 0, "skipped", true}};
    const std::string svg = toSvg(barChart(spec));
    QString why;
    QVERIFY2(wellFormed(svg, why), qPrintable(why));
    QVERIFY(svg.find("+ pin memory") != std::string::npos);
    QVERIFY(svg.find("Ladder &lt;&amp;&gt;") != std::string::npos);
    QCOMPARE(countOf(svg, "<rect"), 1 + 3);  // background + one per bar
  }

  void niceTicksCoverTheRange() {
    auto t = niceTicks(0, 2.1, 5);
    QVERIFY(t.front() <= 0 && t.back() >= 2.1);
    QCOMPARE(t[1] - t[0], 0.5);
  }

  void escapes_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("in");
    QTest::addColumn<QString>("out");
    QTest::newRow("csv plain") << "csv" << "abc" << "abc";
    QTest::newRow("csv comma") << "csv" << "a,b" << "\"a,b\"";
    QTest::newRow("csv quote") << "csv" << "say \"hi\"" << "\"say \"\"hi\"\"\"";
    QTest::newRow("csv newline") << "csv" << "a\nb" << "\"a\nb\"";
    QTest::newRow("xml") << "xml" << "a<b>&\"c'" << "a&lt;b&gt;&amp;&quot;c&#39;";
    QTest::newRow("latex specials") << "tex" << "50% a_b #1 $x {y} &" << "50\\% a\\_b \\#1 \\$x \\{y\\} \\&";
    QTest::newRow("latex unicode") << "tex" << "1.5× → Δ −2" << "1.5$\\times$ $\\rightarrow$ $\\Delta$ $-$2";
    QTest::newRow("markdown pipe") << "md" << "a|b\nc" << "a\\|b c";
  }
  void escapes() {
    QFETCH(QString, format);
    QFETCH(QString, in);
    QFETCH(QString, out);
    const std::string s = in.toStdString();
    std::string got = format == QLatin1String("csv") ? csvField(s)
                      : format == QLatin1String("xml") ? xmlEscape(s)
                      : format == QLatin1String("tex") ? latexEscape(s)
                                                       : markdownCell(s);
    QCOMPARE(QString::fromStdString(got), out);
  }

  void formatsByNameAndExtension() {
    QVERIFY(parseFormat("md").ok() && parseFormat("md").value() == Format::Markdown);
    QVERIFY(parseFormat("LaTeX").value() == Format::Latex);
    auto bad = parseFormat("pdf");
    QVERIFY(!bad.ok());
    QVERIFY(bad.error().message.find("pdf") != std::string::npos);
    QVERIFY(*formatForPath("x/report.HTML") == Format::Html);
    QVERIFY(!formatForPath("x/report").has_value());
  }

  void unwritablePathLeavesNothing_data() {
    QTest::addColumn<QString>("relative");  // under the temp dir; "blocker" is a regular file
    QTest::newRow("parent is a file") << "blocker/report.md";
    QTest::newRow("deeper under a file") << "blocker/sub/report.md";
    QTest::newRow("target is a folder") << "folder";
  }
  void unwritablePathLeavesNothing() {
    QFETCH(QString, relative);
    QTemporaryDir dir;
    { std::ofstream(dir.filePath(QStringLiteral("blocker")).toStdString()) << "x"; }
    QDir(dir.path()).mkdir(QStringLiteral("folder"));
    Report r = sampleReport(dir);
    const QString path = dir.filePath(relative);
    auto st = writeReport(r, Format::Markdown, path.toStdString());
    QVERIFY(!st.ok());
    QVERIFY2(QString::fromStdString(st.error().message).contains(path), st.error().message.c_str());
    QVERIFY(!QFileInfo(path).isFile());
    const auto leftovers = QDir(dir.path()).entryList({QStringLiteral("*.tmp-*")}, QDir::Files);
    QVERIFY(leftovers.isEmpty());
  }

  void atomicWriteReplacesWhole() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("out/report.csv"));
    Report r = sampleReport(dir);
    QVERIFY(writeReport(r, Format::Csv, path.toStdString()).ok());
    QVERIFY(writeReport(r, Format::Csv, path.toStdString()).ok());  // over an existing file
    QCOMPARE(slurp(path), renderCsv(r.tables[0]));
    QVERIFY(QDir(dir.filePath(QStringLiteral("out"))).entryList({QStringLiteral("*.tmp-*")}, QDir::Files).isEmpty());
  }
};

QTEST_APPLESS_MAIN(TestExport)
#include "test_export.moc"
