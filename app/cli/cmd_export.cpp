// workbench-cli export: the comparison as md | csv | tex | json | html, written atomically.
#include <cstdio>

#include "args.h"
#include "commands.h"
#include "wb/report/export.h"

namespace wb::cli {

namespace {

const char* kHelp = R"(Usage: workbench-cli export <run-dir>... --baseline <run-dir> --format md|csv|tex|json|html
                          --output <file> [--target-acc X]

Writes the comparison of the runs against the baseline (the table `compare` prints, the config
differences, the advisor's verdicts; HTML adds loss/accuracy charts and the machine from env.json
in one self-contained page). CSV holds the main table only, with exact numbers. The file is
written to a temporary name and renamed: an unwritable path leaves nothing behind.

Options:
  --baseline DIR     the run the others are measured against (required)
  --format F         md | csv | tex | json | html (default: from the --output extension)
  --output FILE      where to write (required)
  --target-acc X     target val accuracy: 0.85, 85 or 85% (default: the baseline's best)
)";

}  // namespace

int cmdExport(const Argv& argv) {
  Args args(argv, {"help"}, {"baseline", "format", "output", "target-acc"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  std::string usage;
  if (!args.ok()) usage = args.error();
  else if (!args.get("baseline")) usage = "--baseline <run-dir> is required";
  else if (!args.get("output")) usage = "--output <file> is required";
  if (!usage.empty()) {
    std::fprintf(stderr, "workbench-cli export: %s\n\n%s", usage.c_str(), kHelp);
    return 2;
  }
  const std::string output = *args.get("output");
  report::Format format = report::Format::Markdown;
  if (auto f = args.get("format")) {
    auto parsed = report::parseFormat(*f);
    if (!parsed.ok()) {
      std::fprintf(stderr, "workbench-cli export: %s\n", parsed.error().message.c_str());
      return 2;
    }
    format = *parsed;
  } else if (auto byExt = report::formatForPath(output)) {
    format = *byExt;
  } else {
    std::fprintf(stderr, "workbench-cli export: give --format md|csv|tex|json|html (%s has no known extension)\n",
                 output.c_str());
    return 2;
  }
  std::vector<std::string> problems;
  auto rep = report::comparisonFromDirs(*args.get("baseline"), args.positionals(), args.get("target-acc", ""), &problems);
  if (!rep.ok()) {
    std::fprintf(stderr, "workbench-cli export: %s\n", rep.error().message.c_str());
    return rep.error().code == Errc::InvalidConfig ? 2 : 1;
  }
  for (const auto& p : problems) std::fprintf(stderr, "note: %s\n", p.c_str());
  if (auto st = report::writeReport(*rep, format, output); !st.ok()) {
    std::fprintf(stderr, "workbench-cli export: %s\n", st.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s (%s)\n", output.c_str(), report::formatExtension(format));
  return 0;
}

}  // namespace wb::cli
