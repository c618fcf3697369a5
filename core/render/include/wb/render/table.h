#pragma once
// A plain table of display cells, the common currency of every exporter (terminal, CSV,
// Markdown, LaTeX, JSON, HTML) and of the GUI's comparison view. A cell carries the text a person
// reads and, where it has one, the exact number behind it (CSV and JSON write that number).
// Values only; no shared state.
#include <optional>
#include <string>
#include <vector>

#include "wb/common/format.h"  // the numbers in cells (fmtSeconds, fmtSpeedup, …)

namespace wb::render {

struct Cell {
  std::string text;              // what a person reads: "12.3 s", "1.85×", "not reached"
  std::optional<double> number;  // the value behind it in the column's unit, when there is one
  bool strong = false;           // Markdown/HTML show it bold (a speedup with a clear verdict only)
  static Cell str(std::string s) { return Cell{std::move(s), std::nullopt}; }
  static Cell num(std::string s, double v) { return Cell{std::move(s), v}; }
};

struct Column {
  std::string key;    // machine name: "wall_s" (JSON keys, CSV header suffix)
  std::string title;  // heading a person reads: "Wall time"
  std::string unit;   // unit of Cell::number ("s", "x", "pp", "bytes", "%", ""), for CSV/JSON
};

struct Table {
  std::string title;
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;  // each row has columns.size() cells
  std::vector<std::string> notes;       // footnotes shown under the table
};

// Aligned plain-text rendering for the terminal (UTF-8 aware column widths), with the notes.
std::string renderText(const Table& table);

// The same within `maxWidth` terminal columns (a short default output fits 100): the widest
// columns are narrowed, their cells wrapped at spaces (a row then takes several lines), and the
// title and notes wrapped too. A word longer than its column is cut across lines, never lost.
std::string renderText(const Table& table, size_t maxWidth);
// `text` wrapped at spaces into lines of at most `width` columns, each line after `indent` (whose
// width counts) and ending in a newline.
std::string wrapText(const std::string& text, size_t width, const std::string& indent = "");

// Rows become columns: the first column's cells become the headings (a few runs with many
// metrics read better this way on a terminal). Numbers and notes are kept.
Table transpose(const Table& table);

// A cell of an optional value: the formatted number, or "–".
Cell optCell(const std::optional<double>& v, std::string (*fmt)(double));
// A speedup cell: "1.85×"; "contended" (no number: a measurement that shared its CPU with other
// work is no speedup) when `contended`; "–" when absent.
Cell speedupCell(const std::optional<double>& speedup, bool contended);
inline constexpr const char* kContendedText = "contended";

// Display width of a UTF-8 string in terminal columns (one per code point).
size_t displayWidth(const std::string& utf8);

}  // namespace wb::render
