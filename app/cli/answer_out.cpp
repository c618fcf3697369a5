#include "answer_out.h"

namespace wb::cli {

void addDetailsFlag(CLI::App& app, bool& details) {
  app.add_flag("--details", details,
               "print the full table (every measure, its notes and caveats) under the answer instead of the\n"
               "short one");
}

void printAnswer(std::FILE* to, const std::string& answer, const render::Table& table, bool details) {
  std::fprintf(to, "%s\n%s", render::wrapText(answer, kTerminalWidth).c_str(),
               (details ? render::renderText(table) : render::renderText(table, kTerminalWidth)).c_str());
  std::fflush(to);
}

void printWrapped(std::FILE* to, const std::string& line) { std::fprintf(to, "%s", render::wrapText(line, kTerminalWidth).c_str()); }

}  // namespace wb::cli
