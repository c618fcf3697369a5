#pragma once
// What try, ladder, tune and compare print on the terminal: the record's answer first (wrapped),
// then the short table, all within kTerminalWidth columns; --details prints the full table after
// the answer instead.
#include <cstdio>
#include <string>

#include "options.h"
#include "wb/render/table.h"

namespace wb::cli {

inline constexpr size_t kTerminalWidth = 100;

// --details: the full table (every measure, note and caveat) instead of the short one.
void addDetailsFlag(CLI::App& app, bool& details);
// The answer (wrapped), a blank line, then `table` within kTerminalWidth (`details`: as it is,
// however wide: the full table is for reading every figure).
void printAnswer(std::FILE* to, const std::string& answer, const render::Table& table, bool details = false);
// A line of the default output wrapped within kTerminalWidth.
void printWrapped(std::FILE* to, const std::string& line);

}  // namespace wb::cli
