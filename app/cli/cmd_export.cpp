// workbench-cli export: the comparison as md | csv | tex | json | html, written atomically, or
// each run as TensorBoard event files.
#include <cstdio>

#include "commands.h"
#include "wb/common/exit_codes.h"
#include "wb/probe/record.h"
#include "wb/report/export.h"
#include "wb/report/tensorboard.h"

namespace wb::cli {

namespace {

const char* kAbout = R"(comparison tables as md | csv | tex | json | html, or runs for TensorBoard

Writes the comparison of the runs against the baseline (the table `compare` prints, the config
differences, the advisor's verdicts; HTML adds loss/accuracy charts and the machine from env.json
in one self-contained page). CSV holds the main table only, with exact numbers. The file is
written to a temporary name and renamed: an unwritable path leaves nothing behind.

--format tensorboard writes each run (the baseline too, when given) into its own folder under
--output as TensorBoard event files: loss, accuracy, throughput, the step-time split and memory
per step and per evaluation, the config as text and as hparams, the speedups named. Open them
with `tensorboard --logdir OUTPUT`. A run folder that already holds event files is left alone.)";

constexpr const char* kTensorBoard = "tensorboard";

struct ExportOptions {
  std::vector<std::string> runs;
  std::string baseline, target_acc, format, output;
  double min_effect = stats::kDefaultMinEffect;
};

int exportTensorBoard(const ExportOptions& o) {
  std::vector<std::string> dirs;
  if (!o.baseline.empty()) dirs.push_back(o.baseline);
  dirs.insert(dirs.end(), o.runs.begin(), o.runs.end());
  if (dirs.empty()) {
    std::fprintf(stderr, "workbench-cli export: give the run folders to write for TensorBoard\n");
    return kExitUsage;
  }
  auto written = report::writeTensorBoard(dirs, o.output);
  if (!written.ok()) {
    std::fprintf(stderr, "workbench-cli export: %s\n", written.error().message.c_str());
    return 1;
  }
  for (const auto& run : *written)
    std::fprintf(stderr, "wrote %s (%lld scalars from %s)\n", run.file.string().c_str(),
                 static_cast<long long>(run.scalars), run.run_dir.c_str());
  std::fprintf(stderr, "open them with: tensorboard --logdir %s\n", o.output.c_str());
  return 0;
}

int exportCommand(const ExportOptions& o) {
  if (o.format == kTensorBoard) return exportTensorBoard(o);
  const std::string& output = o.output;
  report::Format format = report::Format::Markdown;
  if (!o.format.empty()) {
    format = report::parseFormat(o.format).value();  // checked while parsing
  } else if (auto byExt = report::formatForPath(output)) {
    format = *byExt;
  } else {
    std::fprintf(stderr, "workbench-cli export: give --format md|csv|tex|json|html|tensorboard (%s has no known extension)\n",
                 output.c_str());
    return kExitUsage;
  }
  if (o.baseline.empty()) {
    std::fprintf(stderr, "workbench-cli export: give --baseline DIR, the run the others are measured against "
                         "(only --format tensorboard goes without one)\n");
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

Status checkFormat(const std::string& f) {
  if (f == kTensorBoard) return {};
  auto parsed = report::parseFormat(f);
  if (parsed.ok()) return {};
  return makeError(parsed.error().code, parsed.error().message + "; or tensorboard (event files for TensorBoard)");
}

}  // namespace

void addExport(CLI::App& cli, Commands& out) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* exp = cli.add_subcommand("export", kAbout);
  exp->add_option("run-dir", o->runs, "the runs to compare with the baseline")->type_name("DIR");
  // Required for the comparison's formats (checked there); tensorboard writes runs without one.
  addComparisonOptions(*exp, o->baseline, o->target_acc)->required(false);
  addMinEffectOption(*exp, o->min_effect);
  exp->add_option("--format", o->format,
                  "md | csv | tex | json | html (default: from the --output extension), or tensorboard")
      ->type_name("F")->check(checkedBy(checkFormat, ""));
  exp->add_option("--output", o->output, "where to write (tensorboard: a folder)")->type_name("PATH")->required();
  out.push_back({exp, [o] { return exportCommand(*o); }});
}

}  // namespace wb::cli
