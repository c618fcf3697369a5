#include "wb/report/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace wb::report {
using nlohmann::json;

namespace {

std::optional<double> summaryNumber(const json& summary, const char* key) {
  auto it = summary.find(key);
  if (it == summary.end() || !it->is_number()) return std::nullopt;
  double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<double> throughputAfterWarmup(const std::vector<StepSample>& steps) {
  double samples = 0, seconds = 0;
  for (size_t i = 1; i < steps.size(); ++i) {
    const auto& a = steps[i - 1];
    const auto& b = steps[i];
    // Across an epoch boundary the interval holds an evaluation: leave it out.
    if (a.epoch != b.epoch || b.samples <= a.samples || b.t <= a.t) continue;
    samples += static_cast<double>(b.samples - a.samples);
    seconds += b.t - a.t;
  }
  if (seconds > 0) return samples / seconds;
  if (steps.size() >= 2) {
    std::vector<double> rates;
    for (size_t i = 1; i < steps.size(); ++i)
      if (steps[i].samples_per_s > 0) rates.push_back(steps[i].samples_per_s);
    if (!rates.empty()) return median(rates);
  }
  return std::nullopt;
}

void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, const json*>>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(*it, prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    return;
  }
  out.emplace_back(prefix, &j);
}

// A config value for people: strings without quotes.
std::string show(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::optional<double> speedupOf(std::optional<double> baseline_time, std::optional<double> run_time) {
  if (!baseline_time || !run_time || *run_time <= 0 || *baseline_time <= 0) return std::nullopt;
  return *baseline_time / *run_time;
}

std::optional<double> timeToAccuracy(const std::vector<EvalSample>& evals, double target) {
  // Accuracies are written rounded to float precision: forgive a few ulps so that the run whose
  // best defines the target always reaches it.
  constexpr double kEps = 1e-9;
  for (size_t i = 0; i < evals.size(); ++i) {
    if (!(evals[i].val_acc >= target - kEps)) continue;
    if (i == 0) return evals[0].t;
    const auto& a = evals[i - 1];
    const auto& b = evals[i];
    const double rise = b.val_acc - a.val_acc;
    if (rise <= 0) return b.t;
    const double f = std::clamp((target - a.val_acc) / rise, 0.0, 1.0);
    return a.t + f * (b.t - a.t);
  }
  return std::nullopt;
}

std::optional<StepTimes> meanStepTimes(const std::vector<StepSample>& steps) {
  StepTimes sum;
  int n = 0;
  const size_t first = steps.size() > 1 ? 1 : 0;  // the first interval holds the warm-up
  for (size_t i = first; i < steps.size(); ++i) {
    if (!steps[i].ms) continue;
    const auto& m = *steps[i].ms;
    sum.data += m.data, sum.h2d += m.h2d, sum.fwd += m.fwd, sum.bwd += m.bwd, sum.opt += m.opt, sum.comm += m.comm;
    ++n;
  }
  if (n == 0) return std::nullopt;
  sum.data /= n, sum.h2d /= n, sum.fwd /= n, sum.bwd /= n, sum.opt /= n, sum.comm /= n;
  return sum;
}

RunMetrics computeMetrics(const RunRecord& run, std::optional<double> target) {
  RunMetrics m;
  m.status = run.status;
  const json& s = run.summary;

  m.epochs = static_cast<int>(run.epochs.size());
  if (auto e = summaryNumber(s, "epochs"); e && m.epochs == 0) m.epochs = static_cast<int>(*e);
  m.steps = run.steps.empty() ? 0 : run.steps.back().step;
  if (auto st = summaryNumber(s, "steps")) m.steps = static_cast<int64_t>(*st);

  // Rank 0's clock, the same axis as the time to target (setup + training + evaluation).
  if (run.last_t > 0) {
    m.wall_s = run.last_t;
    m.wall_partial = !run.finished;
  } else {
    m.wall_s = summaryNumber(s, "wall_s");
  }

  if (!run.epochs.empty()) {
    double sum = 0;
    for (const auto& e : run.epochs) sum += e.seconds;
    m.time_per_epoch_s = sum / static_cast<double>(run.epochs.size());
  } else if (m.wall_s && m.epochs > 0) {
    m.time_per_epoch_s = *m.wall_s / m.epochs;
  }

  m.samples_per_s = throughputAfterWarmup(run.steps);
  if (!m.samples_per_s) {
    m.throughput_has_warmup = true;
    std::vector<double> rates;
    for (const auto& e : run.epochs)
      if (e.samples_per_s > 0) rates.push_back(e.samples_per_s);
    if (!rates.empty()) m.samples_per_s = median(rates);
    else if (!run.steps.empty() && run.steps.front().samples_per_s > 0) m.samples_per_s = run.steps.front().samples_per_s;
    else m.samples_per_s = summaryNumber(s, "samples_per_s");
  }

  for (const auto& e : run.evals) {
    if (!m.best_val_acc || e.val_acc > *m.best_val_acc) m.best_val_acc = e.val_acc;
    m.final_val_acc = e.val_acc;
  }
  if (!m.best_val_acc) m.best_val_acc = summaryNumber(s, "best_val_acc");
  if (!m.final_val_acc) m.final_val_acc = summaryNumber(s, "final_val_acc");
  if (target) m.time_to_target_s = timeToAccuracy(run.evals, *target);

  if (run.onCuda() && !run.device_peak.empty()) {
    int64_t peak = 0;
    for (const auto& [rank, bytes] : run.device_peak) peak = std::max(peak, bytes);
    m.peak_mem_bytes = static_cast<double>(peak);
    m.peak_mem_kind = "device";
  } else if (!run.rss_peak.empty()) {
    int64_t sum = 0;
    for (const auto& [rank, bytes] : run.rss_peak) sum += bytes;
    m.peak_mem_bytes = static_cast<double>(sum);
    m.peak_mem_kind = "host";
  } else if (auto p = summaryNumber(s, "peak_mem")) {
    m.peak_mem_bytes = *p;
    m.peak_mem_kind = run.onCuda() ? "device" : "host";
  }

  for (const auto& st : run.steps) {
    if (st.amp_skipped) m.skipped_steps = *st.amp_skipped;
    if (st.amp_scale) m.amp_scale = *st.amp_scale;
  }
  m.step_ms = meanStepTimes(run.steps);
  if (!run.evals.empty()) {
    double sum = 0;
    int n = 0;
    for (const auto& e : run.evals)
      if (e.eval_ms > 0) sum += e.eval_ms, ++n;
    if (n > 0) m.eval_ms = sum / n;
  }
  return m;
}

std::vector<ConfigChange> configDiff(const json& base, const json& run) {
  std::vector<std::pair<std::string, const json*>> a, b;
  flatten(base, "", a);
  flatten(run, "", b);
  std::vector<ConfigChange> out;
  for (const auto& [path, value] : b) {
    auto it = std::find_if(a.begin(), a.end(), [&](const auto& p) { return p.first == path; });
    if (it == a.end()) out.push_back({path, "(absent)", show(*value)});
    else if (*it->second != *value) out.push_back({path, show(*it->second), show(*value)});
  }
  for (const auto& [path, value] : a) {
    bool inRun = std::any_of(b.begin(), b.end(), [&](const auto& p) { return p.first == path; });
    if (!inRun) out.push_back({path, show(*value), "(absent)"});
  }
  return out;
}

std::string describeDiff(const std::vector<ConfigChange>& diff) {
  if (diff.empty()) return "same config";
  std::string out;
  for (const auto& c : diff) {
    if (!out.empty()) out += "; ";
    out += c.path + " " + c.before + " → " + c.after;
  }
  return out;
}

Comparison compareRuns(const RunRecord& baseline, const std::vector<RunRecord>& runs,
                       std::optional<double> target_acc) {
  Comparison cmp;
  cmp.target_user_set = target_acc.has_value();
  cmp.target_acc = target_acc ? *target_acc : computeMetrics(baseline, std::nullopt).best_val_acc.value_or(0.0);

  std::vector<const RunRecord*> records{&baseline};
  for (const auto& run : runs)
    if (run.dir.empty() || run.dir != baseline.dir) records.push_back(&run);
  const RunMetrics b = computeMetrics(baseline, cmp.target_acc);
  for (const RunRecord* rec : records) {
    ComparisonRow row;
    row.label = runLabel(*rec);
    row.dir = rec->dir;
    row.is_baseline = rec == &baseline;
    row.m = row.is_baseline ? b : computeMetrics(*rec, cmp.target_acc);
    if (!row.is_baseline) row.diff = configDiff(baseline.config, rec->config);
    row.speedup_epoch = speedupOf(b.time_per_epoch_s, row.m.time_per_epoch_s);
    row.speedup_wall = speedupOf(b.wall_s, row.m.wall_s);
    row.speedup_target = speedupOf(b.time_to_target_s, row.m.time_to_target_s);
    row.speedup_throughput = speedupOf(row.m.samples_per_s, b.samples_per_s);  // run / baseline
    if (b.best_val_acc && row.m.best_val_acc) row.delta_best_pp = (*row.m.best_val_acc - *b.best_val_acc) * 100.0;
    if (b.final_val_acc && row.m.final_val_acc) row.delta_final_pp = (*row.m.final_val_acc - *b.final_val_acc) * 100.0;
    if (b.peak_mem_bytes && row.m.peak_mem_bytes && *b.peak_mem_bytes > 0)
      row.mem_ratio = *row.m.peak_mem_bytes / *b.peak_mem_bytes;
    cmp.rows.push_back(std::move(row));
  }
  return cmp;
}

namespace {

Cell optCell(const std::optional<double>& v, std::string (*fmt)(double)) {
  if (!v) return Cell::str("–");
  return Cell::num(fmt(*v), *v);
}

}  // namespace

Table comparisonTable(const Comparison& cmp) {
  Table t;
  const std::string target = fmtAccuracy(cmp.target_acc);
  t.title = "Runs against the baseline (target val acc " + target +
            (cmp.target_user_set ? ", set by the user)" : ", the baseline's best)");
  t.columns = {
      {"run", "Run", ""},
      {"status", "Status", ""},
      {"differs", "Differs from baseline", ""},
      {"epochs", "Epochs", ""},
      {"time_per_epoch_s", "Time/epoch", "s"},
      {"speedup_epoch", "× epoch", "x"},
      {"samples_per_s", "Samples/s", "1/s"},
      {"speedup_throughput", "× samples/s", "x"},
      {"wall_s", "Wall time", "s"},
      {"speedup_wall", "× wall", "x"},
      {"time_to_target_s", "Time to " + target, "s"},
      {"speedup_target", "× to target", "x"},
      {"best_val_acc", "Best val acc", "fraction"},
      {"delta_best_pp", "Δ best", "pp"},
      {"final_val_acc", "Final val acc", "fraction"},
      {"delta_final_pp", "Δ final", "pp"},
      {"peak_mem_bytes", "Peak memory", "bytes"},
      {"mem_ratio", "Memory ratio", "x"},
      {"skipped_steps", "fp16 skipped", ""},
  };
  bool anyWarmup = false, anyPartial = false;
  for (const auto& row : cmp.rows) {
    const RunMetrics& m = row.m;
    std::vector<Cell> cells;
    cells.push_back(Cell::str(row.label + (row.is_baseline ? " (baseline)" : "")));
    cells.push_back(Cell::str(m.status + (m.wall_partial ? " (partial)" : "")));
    cells.push_back(Cell::str(row.is_baseline ? "—" : describeDiff(row.diff)));
    cells.push_back(Cell::num(std::to_string(m.epochs), m.epochs));
    cells.push_back(optCell(m.time_per_epoch_s, fmtSeconds));
    cells.push_back(optCell(row.speedup_epoch, fmtSpeedup));
    Cell rate = optCell(m.samples_per_s, fmtRate);
    if (m.throughput_has_warmup && m.samples_per_s) rate.text += "*", anyWarmup = true;
    cells.push_back(rate);
    cells.push_back(optCell(row.speedup_throughput, fmtSpeedup));
    Cell wall = optCell(m.wall_s, fmtSeconds);
    if (m.wall_partial) wall.text += " so far", anyPartial = true;
    cells.push_back(wall);
    cells.push_back(optCell(row.speedup_wall, fmtSpeedup));
    if (m.time_to_target_s) cells.push_back(Cell::num(fmtSeconds(*m.time_to_target_s), *m.time_to_target_s));
    else cells.push_back(Cell::str(m.status == "running" ? "not reached yet" : "not reached"));
    cells.push_back(m.time_to_target_s ? optCell(row.speedup_target, fmtSpeedup) : Cell::str("–"));
    cells.push_back(optCell(m.best_val_acc, fmtAccuracy));
    cells.push_back(optCell(row.delta_best_pp, fmtPp));
    cells.push_back(optCell(m.final_val_acc, fmtAccuracy));
    cells.push_back(optCell(row.delta_final_pp, fmtPp));
    Cell mem = optCell(m.peak_mem_bytes, fmtBytes);
    if (m.peak_mem_bytes) mem.text += " (" + m.peak_mem_kind + ")";
    cells.push_back(mem);
    cells.push_back(optCell(row.mem_ratio, fmtRatio));
    cells.push_back(m.skipped_steps ? Cell::num(std::to_string(*m.skipped_steps), static_cast<double>(*m.skipped_steps))
                                    : Cell::str("–"));
    t.rows.push_back(std::move(cells));
  }
  t.notes.push_back("Speedups are baseline ÷ run for times and run ÷ baseline for samples/s; > 1× is faster.");
  t.notes.push_back("Time to target: first crossing of the target val acc, interpolated linearly between evaluations.");
  if (anyWarmup) t.notes.push_back("* includes the warm-up interval (too few step events to leave it out).");
  if (anyPartial) t.notes.push_back("\"so far\": the run has not ended (no end event, no summary.json).");
  return t;
}

Result<double> parseTargetAccuracy(const std::string& textIn) {
  std::string text = textIn;
  bool percent = false;
  if (!text.empty() && text.back() == '%') percent = true, text.pop_back();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' || !std::isfinite(v))
    return makeError(Errc::InvalidConfig, "--target-acc " + textIn + ": not a number (use e.g. 0.85 or 85%)");
  const double acc = (percent || v > 1.0) ? v / 100.0 : v;
  if (acc <= 0 || acc > 1.0)
    return makeError(Errc::InvalidConfig, "--target-acc " + textIn + ": must be in (0, 1] or (0, 100] %");
  return acc;
}

}  // namespace wb::report
