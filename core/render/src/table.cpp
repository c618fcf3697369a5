#include "wb/render/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace wb::render {

Cell optCell(const std::optional<double>& v, std::string (*fmt)(double)) {
  return v ? Cell::num(fmt(*v), *v) : Cell::str("–");
}

Cell speedupCell(const std::optional<double>& speedup, bool contended) {
  if (contended) return Cell::str(kContendedText);
  return optCell(speedup, fmtSpeedup);
}

size_t displayWidth(const std::string& utf8) {
  size_t n = 0;
  for (unsigned char c : utf8)
    if ((c & 0xC0) != 0x80) ++n;  // count lead bytes, not continuation bytes
  return n;
}

Table transpose(const Table& t) {
  Table out;
  out.title = t.title;
  out.notes = t.notes;
  if (t.columns.empty()) return out;
  out.columns.push_back({t.columns[0].key, t.columns[0].title, ""});
  for (const auto& row : t.rows) out.columns.push_back({"", row.empty() ? std::string() : row[0].text, ""});
  for (size_t c = 1; c < t.columns.size(); ++c) {
    std::vector<Cell> cells{Cell::str(t.columns[c].title)};
    for (const auto& row : t.rows) cells.push_back(c < row.size() ? row[c] : Cell::str(""));
    out.rows.push_back(std::move(cells));
  }
  return out;
}

std::string renderText(const Table& table) {
  std::vector<size_t> width(table.columns.size(), 0);
  for (size_t c = 0; c < table.columns.size(); ++c) width[c] = displayWidth(table.columns[c].title);
  for (const auto& row : table.rows)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], displayWidth(row[c].text));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string& s = c < cells.size() ? cells[c] : std::string();
      out += s;
      if (c + 1 < width.size()) out += std::string(width[c] - displayWidth(s) + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out;
  if (!table.title.empty()) out += table.title + "\n";
  std::vector<std::string> head;
  for (const auto& col : table.columns) head.push_back(col.title);
  out += line(head);
  std::vector<std::string> rule;
  for (size_t w : width) {
    std::string r;
    for (size_t i = 0; i < w; ++i) r += "─";
    rule.push_back(r);
  }
  out += line(rule);
  for (const auto& row : table.rows) {
    std::vector<std::string> cells;
    for (const auto& cell : row) cells.push_back(cell.text);
    out += line(cells);
  }
  for (const auto& note : table.notes) out += "  " + note + "\n";
  return out;
}

}  // namespace wb::render
