#pragma once
// Escaping for each output format (pure functions).
#include <string>

namespace wb::render {

// & < > " ' as entities (HTML, SVG, XML text and attributes).
std::string xmlEscape(const std::string& s);

// LaTeX text mode: \ { } $ & % # _ ^ ~ and the Unicode signs the tables use (×, −, →, Δ, ±, –, —, …).
std::string latexEscape(const std::string& s);

// One RFC 4180 field: quoted (with doubled quotes) when it holds a comma, quote, CR or LF.
std::string csvField(const std::string& s);

// Markdown table cell: | escaped, newlines as spaces.
std::string markdownCell(const std::string& s);

}  // namespace wb::render
