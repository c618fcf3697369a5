#pragma once
// A report: what every export format writes (tables, advisor verdicts, charts, machine info),
// built once and rendered by wb/report/export.h. Values only.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/advice/advisor.h"
#include "wb/render/chart.h"
#include "wb/compare/compare.h"
#include "wb/records/noise.h"
#include "wb/advice/workers_advice.h"
#include "wb/records/run_record.h"
#include "wb/render/table.h"

namespace wb::report {

struct AdviceBlock {
  std::string run;                 // run label
  std::vector<advice::Advice> verdicts;
};

struct Figure {
  std::string id;                  // "loss", "accuracy", "ladder" (file stem, HTML id)
  render::Drawing drawing;                 // drawing.title is the caption
  std::string file;                // where a copy is written beside the report ("ladder.svg"), or ""
};

struct Report {
  std::string title;
  // The experiment's answer in one sentence (wb/compare/answer.h): every export opens with it.
  std::string answer;
  render::Table short_table;       // the short table the terminal prints under the answer (may be empty)
  std::string intro;               // one paragraph of plain text
  std::vector<render::Table> tables;       // tables[0] is the main table (what CSV writes)
  std::vector<AdviceBlock> advice;
  std::vector<Figure> figures;
  std::vector<std::pair<std::string, std::string>> machine;  // env.json, flattened
  nlohmann::json data = nlohmann::json::object();            // structured payload for JSON export
};

// env.json flattened to ("host.cpu", "AMD EPYC …") pairs in file order; arrays joined with ", ".
std::vector<std::pair<std::string, std::string>> machineInfo(const nlohmann::json& env);

// Training loss and validation accuracy against wall time, each run overlaid on the baseline
// (dashed). `records[0]` is the baseline.
render::Drawing lossCurves(const std::vector<const records::RunRecord*>& records);
render::Drawing accuracyCurves(const std::vector<const records::RunRecord*>& records);

// "field | baseline | run" rows for every run that differs (the "differs from baseline" detail).
render::Table configDiffTable(const compare::Comparison& comparison);

// Speedup to the target per run (bars; a run that never reached it is drawn empty, "not
// reached"), with the best val acc under each annotation.
render::BarChartSpec comparisonBars(const compare::Comparison& comparison);

// The comparison as JSON (every metric as a number, null when absent; diffs; target).
nlohmann::json comparisonJson(const compare::Comparison& comparison);

// Everything `compare`/`export` and the GUI show for a set of runs against a baseline.
// `workers`: the worker advice the advisor reads for each run (core/probe's storedWorkersAdvice;
// none given, its data-bound verdicts use the rule of thumb).
// `noise`: the host's band the verdicts use (loadNoise; the assumed band when not given).
Report buildComparisonReport(const records::RunRecord& baseline, const std::vector<records::RunRecord>& runs,
                             std::optional<double> target_acc, const advice::WorkersAdviceFor& workers = {},
                             const records::HostNoise& noise = records::HostNoise{}, double min_effect = stats::kDefaultMinEffect);
// The same from a comparison already made of them (compareRuns(baseline, runs, target)), so a
// view that shows both computes it once.
Report buildComparisonReport(const compare::Comparison& comparison, const records::RunRecord& baseline,
                             const std::vector<records::RunRecord>& runs, const advice::WorkersAdviceFor& workers = {});

// What `compare` and `export` do: loads the baseline and the runs (paths) and the noise stored
// for the baseline's machine (noiseDir()), parses the target ("" = the baseline's best; else 0.85
// / 85 / 85%) and builds the report with `workers` (the stored probes' advice: core/probe's
// storedWorkersAdvice). Errors name the folder or the value. Problems that do not stop the
// comparison (a truncated events file) go to `problems` when it is given.
Result<Report> comparisonFromDirs(const std::string& baseline_dir, const std::vector<std::string>& run_dirs,
                                  const std::string& target_acc, const advice::WorkersAdviceFor& workers,
                                  std::vector<std::string>* problems = nullptr, double min_effect = stats::kDefaultMinEffect);

}  // namespace wb::report
