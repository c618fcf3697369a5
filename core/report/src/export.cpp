#include "wb/report/export.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "wb/common/fs.h"
#include "wb/render/escape.h"

namespace wb::report {
using advice::severityName;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string exactNumber(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

// Numbers align right, text left (the first column is always text).
bool numericColumn(const render::Table& t, size_t c) {
  if (c == 0) return false;
  for (const auto& row : t.rows)
    if (c < row.size() && row[c].number) return true;
  return false;
}

std::string csvHeader(const render::Column& c) { return c.unit.empty() ? c.title : c.title + " (" + c.unit + ")"; }

// ---- Markdown -------------------------------------------------------------------------------
void markdownTable(std::ostringstream& os, const render::Table& t) {
  if (!t.title.empty()) os << "## " << render::markdownCell(t.title) << "\n\n";
  os << '|';
  for (const auto& c : t.columns) os << ' ' << render::markdownCell(c.title) << " |";
  os << "\n|";
  for (size_t i = 0; i < t.columns.size(); ++i) os << (numericColumn(t, i) ? " ---: |" : " :--- |");
  os << '\n';
  for (const auto& row : t.rows) {
    os << '|';
    for (const auto& cell : row) os << ' ' << (cell.strong ? "**" + render::markdownCell(cell.text) + "**" : render::markdownCell(cell.text)) << " |";
    os << '\n';
  }
  os << '\n';
  for (const auto& n : t.notes) os << "*" << render::markdownCell(n) << "*  \n";
  if (!t.notes.empty()) os << '\n';
}

// ---- LaTeX ----------------------------------------------------------------------------------
void latexTable(std::ostringstream& os, const render::Table& t) {
  os << "\\begin{table}[htbp]\n\\centering\n";
  if (!t.title.empty()) os << "\\caption{" << render::latexEscape(t.title) << "}\n";
  os << "\\resizebox{\\linewidth}{!}{%\n\\begin{tabular}{";
  for (size_t i = 0; i < t.columns.size(); ++i) os << (numericColumn(t, i) ? 'r' : 'l');
  os << "}\n\\toprule\n";
  for (size_t i = 0; i < t.columns.size(); ++i) os << (i ? " & " : "") << render::latexEscape(t.columns[i].title);
  os << " \\\\\n\\midrule\n";
  for (const auto& row : t.rows) {
    for (size_t i = 0; i < row.size(); ++i)
      os << (i ? " & " : "") << (row[i].strong ? "\\textbf{" + render::latexEscape(row[i].text) + "}" : render::latexEscape(row[i].text));
    os << " \\\\\n";
  }
  os << "\\bottomrule\n\\end{tabular}%\n}\n";
  for (const auto& n : t.notes) os << "\\par\\footnotesize " << render::latexEscape(n) << "\n";
  os << "\\end{table}\n\n";
}

// ---- HTML -----------------------------------------------------------------------------------
const char* kCss =
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}"
    "table{border-collapse:collapse;margin:0.5em 0 0.3em 0;font-size:0.9em}"
    "th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}td.num,th.num{text-align:right;white-space:nowrap}"
    ".note{color:#555;font-size:0.85em;margin:0.2em 0}"
    "li.warning{color:#a33}li.tip{color:#1a5c9e}figure{margin:1em 0}"
    "figcaption{font-size:0.9em;color:#555}"
    "p.answer{font-size:1.15em;font-weight:600;margin:0.4em 0 1em 0}";

void htmlTable(std::ostringstream& os, const render::Table& t) {
  if (!t.title.empty()) os << "<h2>" << render::xmlEscape(t.title) << "</h2>\n";
  os << "<table>\n<thead><tr>";
  std::vector<bool> numeric;
  for (size_t i = 0; i < t.columns.size(); ++i) numeric.push_back(numericColumn(t, i));
  for (size_t i = 0; i < t.columns.size(); ++i)
    os << (numeric[i] ? "<th class=\"num\">" : "<th>") << render::xmlEscape(t.columns[i].title) << "</th>";
  os << "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    os << "<tr>";
    for (size_t i = 0; i < row.size(); ++i)
      os << (i < numeric.size() && numeric[i] ? "<td class=\"num\">" : "<td>")
         << (row[i].strong ? "<strong>" + render::xmlEscape(row[i].text) + "</strong>" : render::xmlEscape(row[i].text)) << "</td>";
    os << "</tr>\n";
  }
  os << "</tbody>\n</table>\n";
  for (const auto& n : t.notes) os << "<p class=\"note\">" << render::xmlEscape(n) << "</p>\n";
}

json tableJson(const render::Table& t) {
  json cols = json::array(), rows = json::array(), display = json::array();
  for (const auto& c : t.columns) cols.push_back({{"key", c.key}, {"title", c.title}, {"unit", c.unit}});
  for (const auto& row : t.rows) {
    json r = json::object(), d = json::object();
    for (size_t i = 0; i < row.size() && i < t.columns.size(); ++i) {
      r[t.columns[i].key] = row[i].number ? json(*row[i].number) : json(row[i].text);
      d[t.columns[i].key] = row[i].text;
    }
    rows.push_back(std::move(r));
    display.push_back(std::move(d));
  }
  return {{"title", t.title}, {"columns", cols}, {"rows", rows}, {"display", display}, {"notes", t.notes}};
}

}  // namespace

Result<Format> parseFormat(const std::string& nameIn) {
  const std::string name = lower(nameIn);
  if (name == "md" || name == "markdown") return Format::Markdown;
  if (name == "csv") return Format::Csv;
  if (name == "tex" || name == "latex") return Format::Latex;
  if (name == "json") return Format::Json;
  if (name == "html" || name == "htm") return Format::Html;
  return makeError(Errc::InvalidConfig, "--format " + nameIn + ": unknown format (use md, csv, tex, json or html)");
}

std::optional<Format> formatForPath(const fs::path& path) {
  std::string ext = lower(path.extension().string());
  if (ext.empty()) return std::nullopt;
  auto f = parseFormat(ext.substr(1));
  if (!f.ok()) return std::nullopt;
  return f.value();
}

const char* formatExtension(Format f) {
  switch (f) {
    case Format::Markdown: return "md";
    case Format::Csv: return "csv";
    case Format::Latex: return "tex";
    case Format::Json: return "json";
    case Format::Html: return "html";
  }
  return "txt";
}

std::string renderCsv(const render::Table& t) {
  std::ostringstream os;
  for (size_t i = 0; i < t.columns.size(); ++i) os << (i ? "," : "") << render::csvField(csvHeader(t.columns[i]));
  os << "\r\n";
  for (const auto& row : t.rows) {
    for (size_t i = 0; i < row.size(); ++i)
      os << (i ? "," : "") << render::csvField(row[i].number ? exactNumber(*row[i].number) : row[i].text);
    os << "\r\n";
  }
  return os.str();
}

std::string renderMarkdown(const Report& r) {
  std::ostringstream os;
  os << "# " << render::markdownCell(r.title) << "\n\n";
  if (!r.answer.empty()) os << "**" << render::markdownCell(r.answer) << "**\n\n";
  if (!r.intro.empty()) os << r.intro << "\n\n";
  for (const auto& t : r.tables) markdownTable(os, t);
  for (const auto& f : r.figures)
    if (!f.file.empty()) os << "![" << render::markdownCell(f.drawing.title) << "](" << f.file << ")\n\n";
  if (!r.advice.empty()) {
    os << "## Advisor\n\n";
    for (const auto& block : r.advice) {
      os << "**" << render::markdownCell(block.run) << "**\n\n";
      if (block.verdicts.empty()) os << "- nothing to flag\n";
      for (const auto& v : block.verdicts) os << "- " << severityName(v.severity) << ": " << v.text << "\n";
      os << '\n';
    }
  }
  if (!r.machine.empty()) {
    render::Table m{"Machine", {{"key", "Field", ""}, {"value", "Value", ""}}, {}, {}};
    for (const auto& [k, v] : r.machine) m.rows.push_back({render::Cell::str(k), render::Cell::str(v)});
    markdownTable(os, m);
  }
  return os.str();
}

std::string renderLatex(const Report& r) {
  std::ostringstream os;
  os << "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage[utf8]{inputenc}\n"
        "\\usepackage[landscape,margin=1.5cm]{geometry}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n"
        "\\begin{document}\n";
  os << "\\section*{" << render::latexEscape(r.title) << "}\n";
  if (!r.answer.empty()) os << "\\textbf{" << render::latexEscape(r.answer) << "}\n\n";
  if (!r.intro.empty()) os << render::latexEscape(r.intro) << "\n\n";
  for (const auto& t : r.tables) latexTable(os, t);
  if (!r.advice.empty()) {
    os << "\\subsection*{Advisor}\n";
    for (const auto& block : r.advice) {
      os << "\\paragraph{" << render::latexEscape(block.run) << "}\n\\begin{itemize}\n";
      if (block.verdicts.empty()) os << "\\item nothing to flag\n";
      for (const auto& v : block.verdicts) os << "\\item \\textit{" << severityName(v.severity) << ":} " << render::latexEscape(v.text) << "\n";
      os << "\\end{itemize}\n";
    }
  }
  if (!r.machine.empty()) {
    render::Table m{"Machine", {{"key", "Field", ""}, {"value", "Value", ""}}, {}, {}};
    for (const auto& [k, v] : r.machine) m.rows.push_back({render::Cell::str(k), render::Cell::str(v)});
    latexTable(os, m);
  }
  os << "\\end{document}\n";
  return os.str();
}

std::string renderJson(const Report& r) {
  json doc = r.data;
  doc["title"] = r.title;
  if (!r.answer.empty()) doc["answer"] = r.answer;
  json tables = json::array();
  for (const auto& t : r.tables) tables.push_back(tableJson(t));
  doc["tables"] = tables;
  json advice = json::array();
  for (const auto& block : r.advice) {
    json vs = json::array();
    for (const auto& v : block.verdicts) vs.push_back({{"code", v.code}, {"severity", severityName(v.severity)}, {"text", v.text}});
    advice.push_back({{"run", block.run}, {"verdicts", vs}});
  }
  doc["advice"] = advice;
  json machine = json::object();
  for (const auto& [k, v] : r.machine) machine[k] = v;
  doc["machine"] = machine;
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string renderHtml(const Report& r) {
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>" << render::xmlEscape(r.title)
     << "</title>\n<style>" << kCss << "</style>\n</head>\n<body>\n";
  os << "<h1>" << render::xmlEscape(r.title) << "</h1>\n";
  if (!r.answer.empty()) os << "<p class=\"answer\">" << render::xmlEscape(r.answer) << "</p>\n";
  if (!r.intro.empty()) os << "<p>" << render::xmlEscape(r.intro) << "</p>\n";
  for (const auto& t : r.tables) htmlTable(os, t);
  if (!r.advice.empty()) {
    os << "<h2>Advisor</h2>\n";
    for (const auto& block : r.advice) {
      os << "<h3>" << render::xmlEscape(block.run) << "</h3>\n<ul>\n";
      if (block.verdicts.empty()) os << "<li>nothing to flag</li>\n";
      for (const auto& v : block.verdicts)
        os << "<li class=\"" << severityName(v.severity) << "\">" << render::xmlEscape(v.text) << "</li>\n";
      os << "</ul>\n";
    }
  }
  if (!r.figures.empty()) os << "<h2>Charts</h2>\n";
  for (const auto& f : r.figures)
    os << "<figure id=\"fig-" << render::xmlEscape(f.id) << "\">\n" << render::toSvg(f.drawing) << "<figcaption>"
       << render::xmlEscape(f.drawing.title) << "</figcaption>\n</figure>\n";
  if (!r.machine.empty()) {
    render::Table m{"Machine", {{"key", "Field", ""}, {"value", "Value", ""}}, {}, {}};
    for (const auto& [k, v] : r.machine) m.rows.push_back({render::Cell::str(k), render::Cell::str(v)});
    htmlTable(os, m);
  }
  os << "</body>\n</html>\n";
  return os.str();
}

std::string render(const Report& r, Format f) {
  switch (f) {
    case Format::Markdown: return renderMarkdown(r);
    case Format::Csv: return r.tables.empty() ? std::string() : renderCsv(r.tables.front());
    case Format::Latex: return renderLatex(r);
    case Format::Json: return renderJson(r);
    case Format::Html: return renderHtml(r);
  }
  return {};
}

Status writeReport(const Report& r, Format f, const fs::path& path) {
  std::error_code ec;
  if (path.empty()) return makeError(Errc::Io, "no output file given (pass --output <file>)");
  if (fs::is_directory(path, ec))
    return makeError(Errc::Io, path.string() + " is a folder: give a file name, e.g. " + (path / "report.").string() +
                                   formatExtension(f));
  // Refuse before creating anything when a parent is a file (writeFileAtomic would only say ENOTDIR).
  for (fs::path p = path.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path())
    if (fs::exists(p, ec) && !fs::is_directory(p, ec))
      return makeError(Errc::Io, "cannot write " + path.string() + ": " + p.string() + " is a file, not a folder");
  return writeFileAtomic(path, render(r, f));
}

}  // namespace wb::report
