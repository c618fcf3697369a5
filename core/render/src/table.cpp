#include "wb/render/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

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

namespace {

// The first `n` code points of a UTF-8 string, and the rest.
std::pair<std::string, std::string> splitAt(const std::string& s, size_t n) {
  size_t points = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (points == n) break;
      ++points;
    }
  }
  return {s.substr(0, i), s.substr(i)};
}

// Lines of at most `width` code points, broken at spaces (a longer word across lines).
std::vector<std::string> wrapLines(const std::string& text, size_t width) {
  width = std::max<size_t>(width, 1);
  std::vector<std::string> lines;
  std::string line;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t space = std::min(text.find(' ', at), text.size());
    std::string word = text.substr(at, space - at);
    at = space + 1;
    if (word.empty() && space < text.size()) continue;
    const size_t need = displayWidth(line) + (line.empty() ? 0 : 1) + displayWidth(word);
    if (need <= width) {
      line += (line.empty() ? "" : " ") + word;
      continue;
    }
    if (!line.empty()) lines.push_back(line), line.clear();
    while (displayWidth(word) > width) {
      auto [head, tail] = splitAt(word, width);
      lines.push_back(head);
      word = tail;
    }
    line = word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

std::string wrapText(const std::string& text, size_t width, const std::string& indent) {
  const size_t room = width > displayWidth(indent) ? width - displayWidth(indent) : 1;
  std::string out;
  for (const auto& line : wrapLines(text, room)) out += indent + line + "\n";
  return out;
}

std::string renderText(const Table& table, size_t maxWidth) {
  const size_t n = table.columns.size();
  std::vector<size_t> width(n, 0);
  for (size_t c = 0; c < n; ++c) width[c] = displayWidth(table.columns[c].title);
  for (const auto& row : table.rows)
    for (size_t c = 0; c < row.size() && c < n; ++c) width[c] = std::max(width[c], displayWidth(row[c].text));
  const auto total = [&] {
    size_t t = n > 0 ? 2 * (n - 1) : 0;
    for (size_t w : width) t += w;
    return t;
  };
  constexpr size_t kNarrowest = 10;
  while (total() > maxWidth) {  // narrow the widest column, at most down to kNarrowest
    const size_t c = size_t(std::max_element(width.begin(), width.end()) - width.begin());
    if (width[c] <= kNarrowest) break;
    width[c] = std::max(kNarrowest, width[c] - std::min(width[c] - kNarrowest, total() - maxWidth));
  }
  const auto emit = [&](const std::vector<std::string>& cells) {
    std::vector<std::vector<std::string>> wrapped;
    size_t height = 1;
    for (size_t c = 0; c < n; ++c) {
      wrapped.push_back(wrapLines(c < cells.size() ? cells[c] : std::string(), width[c]));
      height = std::max(height, wrapped.back().size());
    }
    std::string out;
    for (size_t l = 0; l < height; ++l) {
      std::string line;
      for (size_t c = 0; c < n; ++c) {
        const std::string s = l < wrapped[c].size() ? wrapped[c][l] : std::string();
        line += s;
        if (c + 1 < n) line += std::string(width[c] - std::min(width[c], displayWidth(s)) + 2, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  };
  std::string out;
  if (!table.title.empty()) out += wrapText(table.title, maxWidth);
  std::vector<std::string> head, rule;
  for (const auto& col : table.columns) head.push_back(col.title);
  out += emit(head);
  for (size_t w : width) {
    std::string r;
    for (size_t i = 0; i < w; ++i) r += "─";
    rule.push_back(r);
  }
  out += emit(rule);
  for (const auto& row : table.rows) {
    std::vector<std::string> cells;
    for (const auto& cell : row) cells.push_back(cell.text);
    out += emit(cells);
  }
  for (const auto& note : table.notes) out += wrapText(note, maxWidth, "  ");
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
