// workbench-cli compare: the comparison table of run folders against a baseline, on the terminal.
#include <cstdio>

#include "answer_out.h"
#include "commands.h"
#include "wb/common/exit_codes.h"
#include "wb/probe/record.h"
#include "wb/report/export.h"

namespace wb::cli {

namespace {

const char* kAbout = R"(comparison table of run directories against a baseline, on the terminal

Prints each run against the baseline: time per epoch, samples/s (warm-up left out), wall time,
time to the target val accuracy (interpolated between evaluations) and the speedup on each,
best and final val acc (Δ pp), peak memory and its ratio, epochs, skipped fp16 steps, status,
what differs from the baseline's config, and the advisor's verdicts. Runs still in progress load
with the numbers so far.)";

struct CompareOptions {
  std::vector<std::string> runs;
  std::string baseline, target_acc;
  double min_effect = stats::kDefaultMinEffect;
  bool wide = false, details = false;
};

// The advisor's verdicts and the config differences, after the table.
void printDetails(const report::Report& r) {
  if (r.tables.size() > 1 && !r.tables[1].rows.empty()) std::printf("\n%s", render::renderText(r.tables[1]).c_str());
  std::printf("\nAdvisor\n");
  for (const auto& block : r.advice) {
    std::printf("  %s\n", block.run.c_str());
    if (block.verdicts.empty()) std::printf("    nothing to flag\n");
    for (const auto& v : block.verdicts) std::printf("    %-7s %s\n", advice::severityName(v.severity), v.text.c_str());
  }
}

int compareCommand(const CompareOptions& o) {
  std::vector<std::string> problems;
  auto rep = report::comparisonFromDirs(o.baseline, o.runs, o.target_acc, probe::storedWorkersAdvice(), &problems, o.min_effect);
  if (!rep.ok()) {
    std::fprintf(stderr, "workbench-cli compare: %s\n", rep.error().message.c_str());
    return rep.error().code == Errc::InvalidConfig ? kExitUsage : kExitFailed;
  }
  for (const auto& p : problems) std::fprintf(stderr, "note: %s\n", p.c_str());
  if (!o.details && !o.wide) {  // the answer and one short row per run
    printAnswer(stdout, rep->answer, rep->short_table);
    std::printf("\n");
    printWrapped(stdout, "Every measure, the config differences and the advisor: --details.");
    return 0;
  }
  const render::Table& main = rep->tables.front();
  const bool transpose = !o.wide && main.rows.size() <= 4;
  printAnswer(stdout, rep->answer, transpose ? render::transpose(main) : main, true);
  printDetails(*rep);
  return 0;
}

}  // namespace

void addCompare(CLI::App& cli, Commands& out) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* compare = cli.add_subcommand("compare", kAbout);
  compare->add_option("run-dir", o->runs, "the runs to compare with the baseline")->type_name("DIR");
  addComparisonOptions(*compare, o->baseline, o->target_acc);
  addMinEffectOption(*compare, o->min_effect);
  compare->add_flag("--wide", o->wide, "the full table as --details prints it, but one row per run (--details alone: one column per\nrun when there are at most 4)");
  addDetailsFlag(*compare, o->details);
  out.push_back({compare, [o] { return compareCommand(*o); }});
}

CLI::Option* addComparisonOptions(CLI::App& app, std::string& baseline, std::string& targetAcc) {
  CLI::Option* option = app.add_option("--baseline", baseline, "the run the others are measured against")
      ->type_name("DIR")->required();
  app.add_option("--target-acc", targetAcc, "target val accuracy: 0.85, 85 or 85% (default: the baseline's best)")
      ->type_name("X")->check(checkedBy([](const std::string& t) { return statusOf(compare::parseTargetAccuracy(t)); }, ""));
  return option;
}

void addMinEffectOption(CLI::App& app, double& minEffect) {
  app.add_option("--min-effect", minEffect,
                 "the smallest effect a verdict calls faster or slower, e.g. 0.02 = 2 % (default);\n"
                 "smaller ones read \"within noise\" however many pairs show them")
      ->type_name("F")->check(inRange(0.0, 1.0));
}

}  // namespace wb::cli
