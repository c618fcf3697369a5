// workbench-cli whatif early-stopping: what each patience / min_delta would have done to a
// finished run, from its validation curve (wb/report/whatif.h), without training again.
#include <cstdio>

#include "args.h"
#include "commands.h"
#include "wb/report/export.h"
#include "wb/report/whatif.h"

namespace wb::cli {

namespace {

const char* kHelp = R"(Usage: workbench-cli whatif early-stopping <run-dir> [--patience 0,1,2,3,4,5]
                          [--min-delta 0,0.001,0.01] [--json] [--format F --output FILE]

Replays the run's evaluations (events.jsonl) through the trainer's early-stopping rule, with the
run's monitor and mode (speedups.early_stopping: val_loss min by default, val_acc max), for each
patience (0 = off) and min_delta: the epoch it would stop after, the best epoch it keeps (best.pt)
and its value, the weights the run ends with, and the wall time saved (rank 0's time from the end
of that epoch to the end of the last one). Answers "what patience should I use?" from a run you
already have. The run needs at least 2 evaluations (2 or more epochs).

Options:
  --patience LIST    patiences to try, comma-separated whole numbers (default 0,1,2,3,4,5)
  --min-delta LIST   min_delta values to try, comma-separated numbers >= 0 (default 0,0.001,0.01)
  --json             the what-if as JSON on stdout
  --format F         with --output: md | csv | tex | json | html (default: from the extension)
  --output FILE      write the table to FILE (atomically) instead of printing it

Exit codes: 0 ok, 1 the run cannot be read or has fewer than 2 evaluations, 2 usage.
)";

int usage(const std::string& why) {
  std::fprintf(stderr, "workbench-cli whatif: %s\n\n%s", why.c_str(), kHelp);
  return 2;
}

Result<report::WhatIfOptions> optionsOf(const Args& args) {
  report::WhatIfOptions o;
  if (auto p = args.get("patience")) {
    auto list = report::parsePatienceList(*p);
    if (!list.ok()) return list.error();
    o.patiences = *list;
  }
  if (auto d = args.get("min-delta")) {
    auto list = report::parseMinDeltaList(*d);
    if (!list.ok()) return list.error();
    o.min_deltas = *list;
  }
  return o;
}

int writeFile(const Args& args, const report::WhatIf& w) {
  const std::string output = *args.get("output");
  std::optional<report::Format> format = report::formatForPath(output);
  if (auto f = args.get("format")) {
    auto parsed = report::parseFormat(*f);
    if (!parsed.ok()) return usage(parsed.error().message);
    format = *parsed;
  }
  if (!format) return usage("give --format md|csv|tex|json|html (" + output + " has no known extension)");
  report::Report r;
  r.title = "Early-stopping what-if: " + w.run;
  r.tables.push_back(report::whatIfTable(w));
  r.data["whatif"] = report::whatIfJson(w);
  if (auto st = report::writeReport(r, *format, output); !st.ok()) {
    std::fprintf(stderr, "workbench-cli whatif: %s\n", st.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s (%s)\n", output.c_str(), report::formatExtension(*format));
  return 0;
}

}  // namespace

int cmdWhatIf(const Argv& argv) {
  Args args(argv, {"help", "json"}, {"patience", "min-delta", "format", "output"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (!args.ok()) return usage(args.error());
  const auto& pos = args.positionals();
  if (pos.empty() || pos[0] != "early-stopping")
    return usage(pos.empty() ? "name the what-if: early-stopping" : "unknown what-if '" + pos[0] + "' (there is early-stopping)");
  if (pos.size() != 2) return usage("give one run folder: whatif early-stopping <run-dir>");
  if (args.get("format") && !args.get("output")) return usage("--format needs --output <file>");
  auto options = optionsOf(args);
  if (!options.ok()) return usage(options.error().message);
  auto run = report::loadRun(pos[1]);
  if (!run.ok()) {
    std::fprintf(stderr, "workbench-cli whatif: %s\n", run.error().message.c_str());
    return 1;
  }
  for (const auto& p : run->problems) std::fprintf(stderr, "note: %s\n", p.c_str());
  const report::WhatIf w = report::earlyStoppingWhatIf(*run, *options);
  if (args.has("json")) std::printf("%s\n", report::whatIfJson(w).dump(2).c_str());
  if (!w.problem.empty()) {
    std::fprintf(stderr, "workbench-cli whatif: %s\n", w.problem.c_str());
    return 1;
  }
  if (args.get("output")) return writeFile(args, w);
  if (!args.has("json")) std::printf("%s", report::renderText(report::whatIfTable(w)).c_str());
  return 0;
}

}  // namespace wb::cli
