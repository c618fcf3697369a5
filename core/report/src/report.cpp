#include "wb/report/report.h"

#include "wb/compare/answer.h"

#include <cmath>

#include "wb/advice/busy_machine.h"
#include "wb/report/whatif.h"

namespace wb::report {
using nlohmann::json;
using advice::WorkersAdvice;
using advice::WorkersAdviceFor;
using advice::advise;
using advice::busyMachineAdvice;
using advice::busyMachineOf;
using advice::ruleOfThumbFor;
using compare::Comparison;
using compare::ComparisonRow;
using compare::Contention;
using compare::RunMetrics;
using compare::ThroughputSource;
using compare::compareRuns;
using compare::comparisonTable;
using compare::parseTargetAccuracy;
using records::HostNoise;
using records::RunRecord;
using records::StepTimes;
using records::loadRun;
using records::loadRuns;
using records::noiseMessage;
using records::noiseOfRunHost;
using records::runLabel;

namespace {

void flattenEnv(const json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flattenEnv(*it, prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    return;
  }
  std::string value;
  if (j.is_string()) value = j.get<std::string>();
  else if (j.is_array()) {
    for (const auto& e : j) value += (value.empty() ? "" : ", ") + (e.is_string() ? e.get<std::string>() : e.dump());
    if (value.empty()) value = "(none)";
  } else value = j.dump();
  out.emplace_back(prefix, value);
}

std::string capitalised(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

render::Drawing curves(const std::vector<const RunRecord*>& records, bool accuracy) {
  render::LineChartSpec spec;
  spec.title = accuracy ? "Validation accuracy over time" : "Training loss over time";
  spec.x_label = "wall time since start (s)";
  spec.y_label = accuracy ? "val acc (%)" : "train loss";
  for (size_t i = 0; i < records.size(); ++i) {
    render::Series s;
    s.name = runLabel(*records[i]) + (i == 0 ? " (baseline)" : "");
    s.dashed = i == 0;
    if (accuracy)
      for (const auto& e : records[i]->evals) s.points.emplace_back(e.t, e.val_acc * 100.0);
    else
      for (const auto& st : records[i]->steps)
        if (std::isfinite(st.loss)) s.points.emplace_back(st.t, st.loss);
    spec.series.push_back(std::move(s));
  }
  return render::lineChart(spec);
}

const char* throughputSourceName(ThroughputSource s) {
  switch (s) {
    case ThroughputSource::None: return "none";
    case ThroughputSource::Summary: return "summary";
    case ThroughputSource::StepEvents: return "step-events";
    case ThroughputSource::StepEventsWithWarmup: return "first-step-event";
    case ThroughputSource::EpochEvents: return "epoch-events";
  }
  return "none";
}

json numberOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json comparisonEstimateJson(const stats::SpeedupEstimate& e) {
  return {{"point", numberOrNull(e.point)}, {"lo", numberOrNull(e.lo)}, {"hi", numberOrNull(e.hi)},
          {"verdict", stats::verdictWord(e.verdict)}, {"pairs", e.pairs}, {"baseline_runs", e.baseline_runs},
          {"runs", e.variant_runs}, {"noise_band", e.noise_band}, {"method", e.method},
          {"level", e.level}, {"min_effect", e.min_effect}, {"text", stats::formatEstimate(e)}};
}

json contentionJson(const Contention& c) {
  return {{"contended", c.contended},     {"other_load_cores", opt(c.other_load_cores)},
          {"shared", c.shared},           {"shared_cores", opt(c.shared_cores)},
          {"cores", c.cores},             {"used_cores", opt(c.used_cores)},
          {"asked_cores", opt(c.asked_cores)}, {"note", c.note},
          {"busiest_others", proto::toJson(c.busiest_others)}};
}

}  // namespace

std::vector<std::pair<std::string, std::string>> machineInfo(const json& env) {
  std::vector<std::pair<std::string, std::string>> out;
  if (env.is_object()) flattenEnv(env, "", out);
  return out;
}

render::Drawing lossCurves(const std::vector<const RunRecord*>& records) { return curves(records, false); }
render::Drawing accuracyCurves(const std::vector<const RunRecord*>& records) { return curves(records, true); }

render::Table configDiffTable(const Comparison& cmp) {
  render::Table t;
  t.title = "Config differences from the baseline";
  t.columns = {{"run", "Run", ""}, {"field", "Field", ""}, {"baseline", "Baseline", ""}, {"value", "This run", ""}};
  for (const auto& row : cmp.rows) {
    if (row.is_baseline) continue;
    if (row.diff.empty()) t.rows.push_back({render::Cell::str(row.label), render::Cell::str("(none)"), render::Cell::str("—"), render::Cell::str("—")});
    for (const auto& c : row.diff)
      t.rows.push_back({render::Cell::str(row.label), render::Cell::str(c.path), render::Cell::str(c.before), render::Cell::str(c.after)});
  }
  return t;
}

render::BarChartSpec comparisonBars(const Comparison& cmp) {
  render::BarChartSpec spec;
  spec.title = "Speedup to " + fmtAccuracy(cmp.target_acc) + " val acc over the baseline";
  spec.y_label = "speedup (×), 95 % interval";
  for (const auto& row : cmp.rows) {
    render::Bar b;
    b.label = row.label;
    if (b.label.size() > 24) b.label = "…" + b.label.substr(b.label.size() - 22);
    if (const std::string withheld = row.withheldWord(); !withheld.empty()) {
      b.skipped = true;
      // A run that ended unfinished says so ("failed: no speedup"); one still running, "running".
      const bool ended = withheld == row.m.status && row.m.status != "running";
      b.annotation = ended ? withheld + ": no speedup" : withheld;
    } else if (row.is_baseline && row.m.time_to_target_s) {
      b.value = 1.0;
      b.annotation = "baseline";
      b.bold = false;
    } else if (std::isfinite(row.target.point)) {
      b.value = row.target.point;
      if (stats::drawsInterval(row.target)) b.lo = row.target.lo, b.hi = row.target.hi;
      b.annotation = !stats::notMeasuredWhy(row.target).empty() ? std::string("not measured")
                     : fmtSpeedup(row.target.point) + " " +
                           (row.target.hasInterval() ? stats::verdictWord(row.target.verdict) : std::string("(1 run each)"));
      b.bold = stats::emphasise(row.target);
    } else {
      b.skipped = true;
      b.annotation = row.m.status == "running" ? "not reached yet" : "not reached";
    }
    if (row.m.best_val_acc) b.detail = "acc " + fmtFixed(*row.m.best_val_acc * 100.0, 1) + " %";
    spec.bars.push_back(b);
  }
  return spec;
}

json comparisonJson(const Comparison& cmp) {
  json runs = json::array();
  for (const auto& row : cmp.rows) {
    const RunMetrics& m = row.m;
    // A run that gives no speedup (other data, unfinished, contended, …) has no multiplier here.
    auto shown = [&](const std::optional<double>& x) { return row.noSpeedupReason().empty() ? opt(x) : json(nullptr); };
    json diff = json::array();
    for (const auto& c : row.diff) diff.push_back({{"path", c.path}, {"baseline", c.before}, {"run", c.after}});
    json r = {{"label", row.label},
              {"dir", row.dir},
              {"baseline", row.is_baseline},
              {"status", m.status},
              {"partial", m.wall_partial},
              {"epochs", m.epochs},
              {"steps", m.steps},
              {"time_per_epoch_s", opt(m.time_per_epoch_s)},
              {"train_samples_per_s", opt(m.train_samples_per_s)},
              {"train_samples_per_s_source", throughputSourceName(m.throughput_source)},
              {"train_samples_per_s_includes_warmup", m.throughputIncludesWarmup()},
              {"wall_s", opt(m.wall_s)},
              {"run_wall_s", opt(m.run_wall_s)},
              {"eval_s", opt(m.eval_s)},
              {"time_to_first_step_s", opt(m.time_to_first_step_s)},
              {"cpu", contentionJson(m.contention)},
              {"speedups_contended", !row.is_baseline && !row.contended.empty()},
              {"contention_note", row.contended},
              {"time_to_target_s", opt(m.time_to_target_s)},
              {"reached_target", m.time_to_target_s.has_value()},
              {"best_val_acc", opt(m.best_val_acc)},
              {"final_val_acc", opt(m.final_val_acc)},
              {"peak_mem_bytes", opt(m.peak_mem_bytes)},
              {"peak_mem_kind", m.peak_mem_kind},
              {"skipped_steps", m.skipped_steps ? json(*m.skipped_steps) : json(nullptr)},
              {"lr", {{"base", m.lr.base_lr}, {"scaling", m.lr.mode}, {"factor", m.lr.factor},
                      {"effective", m.lr.effective_lr}, {"note", m.lr.note}}},
              {"speedup", {{"epoch", shown(row.speedup_epoch)},
                           {"train_samples_per_s", shown(row.speedup_throughput)},
                           {"wall", shown(row.speedup_wall)},
                           {"to_target", shown(row.speedup_target)}}},
              {"group", row.group},
              {"group_runs", row.group_runs},
              {"repeat_of_baseline", row.repeat_of_baseline},
              {"not_comparable", row.not_comparable},
              {"unfinished", row.unfinished},
              {"host_changed", row.host_changed},
              {"no_speedup_reason", row.noSpeedupReason()},
              {"delta_best_pp", opt(row.delta_best_pp)},
              {"delta_final_pp", opt(row.delta_final_pp)},
              {"mem_ratio", opt(row.mem_ratio)},
              {"config_diff", diff}};
    if (!row.is_baseline && row.noSpeedupReason().empty())
      r["estimate"] = {{"to_target", comparisonEstimateJson(row.target)}, {"train_samples_per_s", comparisonEstimateJson(row.throughput)}};
    if (m.step_ms) {
      const StepTimes& s = *m.step_ms;
      r["step_ms"] = {{"data", s.data}, {"h2d", s.h2d}, {"fwd", s.fwd}, {"bwd", s.bwd}, {"opt", s.opt}, {"comm", s.comm}};
      if (s.other > 0) r["step_ms"]["other"] = s.other;  // a writer that timed only some phases
    }
    runs.push_back(std::move(r));
  }
  const json noise = {{"band", cmp.noise.band}, {"bands", cmp.noise.bands}, {"measured", cmp.noise.measured},
                      {"source", cmp.noise.source}, {"message", noiseMessage(cmp.noise)}};
  return {{"target_acc", cmp.target_acc}, {"target_user_set", cmp.target_user_set}, {"target", cmp.target.describe()},
          {"min_effect", cmp.min_effect}, {"noise", noise}, {"runs", runs},
          {"busy_machine", busyMachineAdvice(busyMachineOf(cmp))}};
}

Report buildComparisonReport(const RunRecord& baseline, const std::vector<RunRecord>& runs,
                             std::optional<double> target_acc, const WorkersAdviceFor& workers, const HostNoise& noise,
                             double min_effect) {
  return buildComparisonReport(compareRuns(baseline, runs, target_acc, noise, min_effect), baseline, runs, workers);
}

Report buildComparisonReport(const Comparison& cmp, const RunRecord& baseline, const std::vector<RunRecord>& runs,
                             const WorkersAdviceFor& workers) {
  Report r;
  r.title = "Speedup comparison against " + runLabel(baseline);
  r.answer = compare::compareAnswer(cmp);
  r.short_table = compare::compareAnswerTable(cmp);
  r.intro = "Each run is measured against the baseline " + runLabel(baseline) +
            ". A speedup is only shown beside the accuracy it reached; the headline is the time to reach " +
            fmtAccuracy(cmp.target_acc) + " validation accuracy. Train samples/s counts training steps only. "
            "A run (or baseline) measured while another process used the CPU shows no speedup. " + capitalised(noiseMessage(cmp.noise)) + ".";
  if (const std::string busy = busyMachineAdvice(busyMachineOf(cmp)); !busy.empty()) r.intro += " " + busy;
  r.tables.push_back(comparisonTable(cmp));
  r.tables.push_back(configDiffTable(cmp));

  std::vector<const RunRecord*> records{&baseline};
  for (const auto& run : runs)
    if (run.dir.empty() || run.dir != baseline.dir) records.push_back(&run);
  // What each run's validation curve says about early stopping (runs of 2+ evaluations).
  if (render::Table whatIf = whatIfComparisonTable(records); !whatIf.rows.empty()) r.tables.push_back(std::move(whatIf));
  const RunMetrics& bm = cmp.rows.front().m;
  for (size_t i = 0; i < records.size(); ++i) {
    const bool isBase = i == 0;
    const ComparisonRow& row = cmp.rows[i];
    const stats::SpeedupEstimate& effect = std::isfinite(row.target.point) ? row.target : row.throughput;
    // A run that gives no speedup (other data, unfinished, a repeat of the baseline) has no effect to advise on.
    const stats::SpeedupEstimate none;
    const WorkersAdvice advice = workers ? workers(*records[i]) : ruleOfThumbFor(*records[i]);
    auto verdicts = advise(*records[i], row.m, isBase ? nullptr : &baseline, isBase ? nullptr : &bm, &advice,
                           row.noSpeedupReason().empty() ? &effect : &none);
    r.advice.push_back({cmp.rows[i].label, std::move(verdicts)});
  }
  r.figures.push_back({"speedup", render::barChart(comparisonBars(cmp)), ""});
  r.figures.push_back({"loss", lossCurves(records), ""});
  r.figures.push_back({"accuracy", accuracyCurves(records), ""});
  r.machine = machineInfo(baseline.env);
  r.data["comparison"] = comparisonJson(cmp);
  r.data["answer"] = r.answer;
  return r;
}

Result<Report> comparisonFromDirs(const std::string& baseline_dir, const std::vector<std::string>& run_dirs,
                                  const std::string& target_acc, const WorkersAdviceFor& workers,
                                  std::vector<std::string>* problems, double min_effect) {
  std::optional<double> target;
  if (!target_acc.empty()) {
    auto t = parseTargetAccuracy(target_acc);
    if (!t.ok()) return t.error();
    target = *t;
  }
  auto baseline = loadRun(baseline_dir);
  if (!baseline.ok()) return baseline.error();
  auto runs = loadRuns(run_dirs);
  if (!runs.ok()) return runs.error();
  if (problems) {
    for (const auto& p : baseline->problems) problems->push_back(p);
    for (const auto& r : *runs)
      for (const auto& p : r.problems) problems->push_back(p);
  }
  return buildComparisonReport(*baseline, *runs, target, workers, noiseOfRunHost(*baseline), min_effect);
}

}  // namespace wb::report
