#pragma once
// Renders a Report as Markdown, CSV, LaTeX (booktabs), JSON or one self-contained HTML page
// (inline SVG charts, no external files), and writes it atomically (wb::writeFileAtomic: temp
// file + fsync + rename, so an unwritable path or a full disk leaves no half-written file).
#include <filesystem>
#include <optional>
#include <string>

#include "wb/common/result.h"
#include "wb/report/report.h"

namespace wb::report {

enum class Format { Markdown, Csv, Latex, Json, Html };

// "md"|"markdown", "csv", "tex"|"latex", "json", "html"|"htm". Error names the value and the choices.
Result<Format> parseFormat(const std::string& name);
// From a file name's extension (.md .csv .tex .json .html .htm); nullopt when unknown.
std::optional<Format> formatForPath(const std::filesystem::path& path);
const char* formatExtension(Format f);  // "md", "csv", "tex", "json", "html"

std::string renderMarkdown(const Report& r);
std::string renderCsv(const render::Table& t);    // RFC 4180, CRLF line ends, header "title (unit)"; numbers exact
std::string renderLatex(const Report& r); // a complete document (article + booktabs + graphicx)
std::string renderJson(const Report& r);
std::string renderHtml(const Report& r);  // XHTML-style: every element closed
// CSV writes the report's main table (tables[0]).
std::string render(const Report& r, Format f);

// Renders and writes atomically. Errors (Io) name the path: a folder, a parent that is a file,
// no permission, a full disk.
Status writeReport(const Report& r, Format f, const std::filesystem::path& path);

}  // namespace wb::report
