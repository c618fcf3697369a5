#include "wb/render/escape.h"

#include <utility>
#include <vector>

namespace wb::render {

std::string xmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string latexEscape(const std::string& s) {
  // Multi-byte signs first (pdflatex without extra packages knows none of them).
  static const std::vector<std::pair<std::string, std::string>> kUnicode = {
      {"×", "$\\times$"}, {"−", "$-$"}, {"→", "$\\rightarrow$"}, {"Δ", "$\\Delta$"}, {"±", "$\\pm$"},
      {"–", "--"},        {"—", "---"}, {"…", "\\ldots{}"},       {"µ", "$\\mu$"},   {"≥", "$\\geq$"}, {"≤", "$\\leq$"}};
  std::string out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    bool matched = false;
    for (const auto& [from, to] : kUnicode)
      if (s.compare(i, from.size(), from) == 0) {
        out += to;
        i += from.size();
        matched = true;
        break;
      }
    if (matched) continue;
    const char c = s[i++];
    switch (c) {
      case '\\': out += "\\textbackslash{}"; break;
      case '{': out += "\\{"; break;
      case '}': out += "\\}"; break;
      case '$': out += "\\$"; break;
      case '&': out += "\\&"; break;
      case '%': out += "\\%"; break;
      case '#': out += "\\#"; break;
      case '_': out += "\\_"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '<': out += "\\textless{}"; break;
      case '>': out += "\\textgreater{}"; break;
      case '\n': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string markdownCell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

}  // namespace wb::render
