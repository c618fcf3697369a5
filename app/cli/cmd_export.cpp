// workbench-cli export: the comparison as md | csv | tex | json | html, written atomically.
#include <cstdio>

#include "commands.h"
#include "wb/common/exit_codes.h"
#include "wb/probe/record.h"
#include "wb/report/export.h"

namespace wb::cli {

namespace {

const char* kAbout = R"(comparison tables as md | csv | tex | json | html

Writes the comparison of the runs against the baseline (the table `compare` prints, the config
differences, the advisor's verdicts; HTML adds loss/accuracy charts and the machine from env.json
in one self-contained page). CSV holds the main table only, with exact numbers. The file is
written to a temporary name and renamed: an unwritable path leaves nothing behind.)";

struct ExportOptions {
  std::vector<std::string> runs;
  std::string baseline, target_acc, format, output;
  double min_effect = stats::kDefaultMinEffect;
};

int exportCommand(const ExportOptions& o) {
  const std::string& output = o.output;
  report::Format format = report::Format::Markdown;
  if (!o.format.empty()) {
    format = report::parseFormat(o.format).value();  // checked while parsing
  } else if (auto byExt = report::formatForPath(output)) {
    format = *byExt;
  } else {
    std::fprintf(stderr, "workbench-cli export: give --format md|csv|tex|json|html (%s has no known extension)\n",
                 output.c_str());
    return kExitUsage;
  }
  std::vector<std::string> problems;
  auto rep = report::comparisonFromDirs(o.baseline, o.runs, o.target_acc, probe::storedWorkersAdvice(), &problems, o.min_effect);
  if (!rep.ok()) {
    std::fprintf(stderr, "workbench-cli export: %s\n", rep.error().message.c_str());
    return rep.error().code == Errc::InvalidConfig ? kExitUsage : kExitFailed;
  }
  for (const auto& p : problems) std::fprintf(stderr, "note: %s\n", p.c_str());
  if (auto st = report::writeReport(*rep, format, output); !st.ok()) {
    std::fprintf(stderr, "workbench-cli export: %s\n", st.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s (%s)\n", output.c_str(), report::formatExtension(format));
  return 0;
}

}  // namespace

void addExport(CLI::App& cli, Commands& out) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* exp = cli.add_subcommand("export", kAbout);
  exp->add_option("run-dir", o->runs, "the runs to compare with the baseline")->type_name("DIR");
  addComparisonOptions(*exp, o->baseline, o->target_acc);
  addMinEffectOption(*exp, o->min_effect);
  exp->add_option("--format", o->format, "md | csv | tex | json | html (default: from the --output extension)")
      ->type_name("F")->check(checkedBy([](const std::string& f) { return statusOf(report::parseFormat(f)); }, ""));
  exp->add_option("--output", o->output, "where to write")->type_name("FILE")->required();
  out.push_back({exp, [o] { return exportCommand(*o); }});
}

}  // namespace wb::cli
