// workbench-cli compare: the comparison table of run folders against a baseline, on the terminal.
#include <cstdio>

#include "args.h"
#include "commands.h"
#include "wb/report/export.h"

namespace wb::cli {

namespace {

const char* kHelp = R"(Usage: workbench-cli compare <run-dir>... --baseline <run-dir> [--target-acc X]

Prints each run against the baseline: time per epoch, samples/s (warm-up left out), wall time,
time to the target val accuracy (interpolated between evaluations) and the speedup on each,
best and final val acc (Δ pp), peak memory and its ratio, epochs, skipped fp16 steps, status,
what differs from the baseline's config, and the advisor's verdicts. Runs still in progress load
with the numbers so far.

Options:
  --baseline DIR     the run the others are measured against (required)
  --target-acc X     target val accuracy: 0.85, 85 or 85% (default: the baseline's best)
  --wide             one row per run (default: one column per run when there are at most 4)
)";

// The advisor's verdicts and the config differences, after the table.
void printDetails(const report::Report& r) {
  if (r.tables.size() > 1 && !r.tables[1].rows.empty()) std::printf("\n%s", report::renderText(r.tables[1]).c_str());
  std::printf("\nAdvisor\n");
  for (const auto& block : r.advice) {
    std::printf("  %s\n", block.run.c_str());
    if (block.verdicts.empty()) std::printf("    nothing to flag\n");
    for (const auto& v : block.verdicts) std::printf("    %-7s %s\n", report::severityName(v.severity), v.text.c_str());
  }
}

}  // namespace

int cmdCompare(const Argv& argv) {
  Args args(argv, {"help", "wide"}, {"baseline", "target-acc"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (!args.ok() || !args.get("baseline")) {
    std::fprintf(stderr, "workbench-cli compare: %s\n\n%s", args.ok() ? "--baseline <run-dir> is required" : args.error().c_str(), kHelp);
    return 2;
  }
  std::vector<std::string> problems;
  auto rep = report::comparisonFromDirs(*args.get("baseline"), args.positionals(), args.get("target-acc", ""), &problems);
  if (!rep.ok()) {
    std::fprintf(stderr, "workbench-cli compare: %s\n", rep.error().message.c_str());
    return rep.error().code == Errc::InvalidConfig ? 2 : 1;
  }
  for (const auto& p : problems) std::fprintf(stderr, "note: %s\n", p.c_str());
  const report::Table& main = rep->tables.front();
  const bool transpose = !args.has("wide") && main.rows.size() <= 4;
  std::printf("%s", report::renderText(transpose ? report::transpose(main) : main).c_str());
  printDetails(*rep);
  return 0;
}

}  // namespace wb::cli
