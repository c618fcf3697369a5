// workbench-cli whatif early-stopping: what each patience / min_delta would have done to a
// finished run, from its validation curve (wb/report/whatif.h), without training again.
#include <cstdio>
#include <limits>
#include <optional>

#include "commands.h"
#include "wb/report/export.h"
#include "wb/report/whatif.h"

namespace wb::cli {

namespace {

const char* kAbout = R"(whatif early-stopping <run-dir>: each patience / min_delta replayed on a finished run)";

const char* kEarlyStoppingAbout = R"(each patience / min_delta replayed on a finished run's validation curve

Replays the run's evaluations (events.jsonl) through the trainer's early-stopping rule, with the
run's monitor and mode (speedups.early_stopping: val_loss min by default, val_acc max), for each
patience (0 = off) and min_delta: the epoch it would stop after, the best epoch it keeps (best.pt)
and its value, the weights the run ends with, and the wall time saved (rank 0's time from the end
of that epoch to the end of the last one). Answers "what patience should I use?" from a run you
already have. The run needs at least 2 evaluations (2 or more epochs).)";

const char* kFooter = R"(
Exit codes: 0 ok, 1 the run cannot be read or has fewer than 2 evaluations, 2 usage.)";

struct WhatIfCliOptions {
  std::string run_dir, format, output;
  std::vector<int> patiences;
  std::vector<double> min_deltas;
  bool json = false;
};

int writeFile(const CLI::App& app, const WhatIfCliOptions& o, const report::WhatIf& w) {
  const std::string& output = o.output;
  std::optional<report::Format> format = report::formatForPath(output);
  if (!o.format.empty()) format = report::parseFormat(o.format).value();  // checked while parsing
  if (!format) return usageError(app, "give --format md|csv|tex|json|html (" + output + " has no known extension)");
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

int whatIfCommand(const CLI::App& app, const WhatIfCliOptions& o) {
  if (!o.format.empty() && o.output.empty()) return usageError(app, "--format needs --output <file>");
  report::WhatIfOptions options;
  if (!o.patiences.empty()) options.patiences = o.patiences;
  if (!o.min_deltas.empty()) options.min_deltas = o.min_deltas;
  auto run = records::loadRun(o.run_dir);
  if (!run.ok()) {
    std::fprintf(stderr, "workbench-cli whatif: %s\n", run.error().message.c_str());
    return 1;
  }
  for (const auto& p : run->problems) std::fprintf(stderr, "note: %s\n", p.c_str());
  const report::WhatIf w = report::earlyStoppingWhatIf(*run, options);
  if (o.json) std::printf("%s\n", report::whatIfJson(w).dump(2).c_str());
  if (!w.problem.empty()) {
    std::fprintf(stderr, "workbench-cli whatif: %s\n", w.problem.c_str());
    return 1;
  }
  if (!o.output.empty()) return writeFile(app, o, w);
  if (!o.json) std::printf("%s", render::renderText(report::whatIfTable(w)).c_str());
  return 0;
}

}  // namespace

void addWhatIf(CLI::App& cli, Commands& out) {
  CLI::App* whatif = cli.add_subcommand("whatif", kAbout);
  auto o = std::make_shared<WhatIfCliOptions>();
  CLI::App* es = whatif->add_subcommand("early-stopping", kEarlyStoppingAbout);
  es->add_option("run-dir", o->run_dir, "the finished run")->type_name("DIR")->required();
  addListOption(*es, "--patience", o->patiences, inRange(0, 1000), "patiences to try, comma-separated (default 0,1,2,3,4,5)")
      ->type_name("N,...");
  addListOption(*es, "--min-delta", o->min_deltas, inRange(0.0, std::numeric_limits<double>::max()),
                "min_delta values to try, comma-separated (default 0,0.001,0.01)")
      ->type_name("X,...");
  es->add_flag("--json", o->json, "the what-if as JSON on stdout");
  es->add_option("--format", o->format, "with --output: md | csv | tex | json | html (default: from the extension)")
      ->type_name("F")->check(checkedBy([](const std::string& f) { return statusOf(report::parseFormat(f)); }, ""));
  es->add_option("--output", o->output, "write the table to FILE (atomically) instead of printing it")->type_name("FILE");
  es->footer(kFooter);
  out.push_back({es, [es, o] { return whatIfCommand(*es, *o); }});
  out.push_back(addChooser(*whatif, "what-if"));
}

}  // namespace wb::cli
