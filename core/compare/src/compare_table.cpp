// The comparison as a table: one row per run against the baseline, its cells, groups and notes.
#include <algorithm>
#include <cmath>

#include "wb/compare/compare.h"
#include "wb/compare/mfu.h"

namespace wb::compare {
using nlohmann::json;

namespace {

// "1.9 of 2 asked" (used / asked cores).
render::Cell coresCell(const Contention& c) {
  if (!c.used_cores) return render::Cell::str("–");
  std::string text = fmtFixed(*c.used_cores, 1);
  if (c.asked_cores) text += " of " + fmtFixed(*c.asked_cores, 0) + " asked";
  return render::Cell::num(text, *c.used_cores);
}

// The other load on the machine: "none (0.1)", or the note when contended.
render::Cell otherLoadCell(const Contention& c) {
  if (c.contended) return c.other_load_cores ? render::Cell::num(c.note, *c.other_load_cores) : render::Cell::str(c.note);
  if (!c.other_load_cores) return render::Cell::str("–");
  return render::Cell::num("none (" + fmtFixed(*c.other_load_cores, 1) + ")", *c.other_load_cores);
}

render::Cell throughputCell(const RunMetrics& m) {
  render::Cell rate = render::optCell(m.train_samples_per_s, fmtRate);
  if (m.throughputIncludesWarmup()) rate.text += "*";
  return rate;
}

render::Cell targetCell(const RunMetrics& m) {
  if (m.time_to_target_s) return render::Cell::num(fmtSeconds(*m.time_to_target_s), *m.time_to_target_s);
  return render::Cell::str(m.status == "running" ? "not reached yet" : "not reached");
}

// A row's speedup cell when it shows none: the reason in a word or two ("" when it shows them).

std::string fmtBound(double x) { return fmtFixed(x, 2); }

// ×, 95 % low, 95 % high, verdict of one estimate (the row's group against the baseline's).
std::vector<render::Cell> estimateCells(const ComparisonRow& row, const stats::SpeedupEstimate& e, const char* missing) {
  const render::Cell none = render::Cell::str("–");
  if (row.is_baseline) return {render::Cell::num(fmtSpeedup(1.0), 1.0), none, none, render::Cell::str("baseline")};
  if (const std::string w = row.withheldWord(); !w.empty())
    // A repeat of the baseline differs from it by noise alone, but only one that was measured
    // says so: a cancelled, unfinished or contended repeat says why it was not.
    return {render::Cell::str(w), none, none, render::Cell::str(w == "repeat of baseline" ? "repeat of the baseline: within noise" : w)};
  if (!std::isfinite(e.point)) return {render::Cell::str(missing), none, none, none};
  render::Cell point = render::Cell::num(fmtSpeedup(e.point), e.point);
  point.strong = stats::emphasise(e);
  if (!e.hasInterval()) return {point, none, none, render::Cell::str(stats::verdictWord(e.verdict))};
  return {point, render::Cell::num(fmtBound(e.lo), e.lo), render::Cell::num(fmtBound(e.hi), e.hi), render::Cell::str(stats::verdictWord(e.verdict))};
}

void append(std::vector<render::Cell>& cells, std::vector<render::Cell> more) {
  for (auto& c : more) cells.push_back(std::move(c));
}

std::vector<render::Cell> comparisonCells(const ComparisonRow& row) {
  const RunMetrics& m = row.m;
  const std::string withheld = row.withheldWord();
  auto speedup = [&](const std::optional<double>& x) {
    return withheld.empty() ? render::speedupCell(x, false) : render::Cell::str(withheld);
  };
  render::Cell wall = render::optCell(m.wall_s, fmtSeconds);
  if (m.wall_partial) wall.text += " so far";
  std::vector<render::Cell> cells{render::Cell::str(row.label + (row.is_baseline ? " (baseline)" : "")),
          render::Cell::str(m.status + (m.wall_partial ? " (partial)" : "")),
          render::Cell::str(row.is_baseline ? "—" : describeDiff(row.diff)),
          render::Cell::num(std::to_string(m.epochs), m.epochs),
          render::Cell::num(lrScalingLabel(m.lr), m.lr.effective_lr),
          render::optCell(m.time_per_epoch_s, fmtSeconds),
          speedup(row.speedup_epoch),
          throughputCell(m)};
  append(cells, estimateCells(row, row.throughput, "–"));
  append(cells, {wall, speedup(row.speedup_wall), targetCell(m)});
  append(cells, estimateCells(row, row.target, m.status == "running" ? "not reached yet" : "not reached"));
  append(cells, {render::optCell(m.best_val_acc, fmtAccuracy),
          render::optCell(row.delta_best_pp, fmtPp),
          render::optCell(m.final_val_acc, fmtAccuracy),
          render::optCell(row.delta_final_pp, fmtPp),
          render::optCell(m.eval_s, fmtSeconds),
          render::optCell(m.time_to_first_step_s, fmtSeconds),
          render::optCell(m.run_wall_s, fmtSeconds),
          coresCell(m.contention),
          otherLoadCell(m.contention),
          [&] {
            render::Cell mem = render::optCell(m.peak_mem_bytes, fmtBytes);
            if (m.peak_mem_bytes) mem.text += " (" + m.peak_mem_kind + ")";
            return mem;
          }(),
          render::optCell(row.mem_ratio, fmtRatio),
          m.skipped_steps ? render::Cell::num(std::to_string(*m.skipped_steps), static_cast<double>(*m.skipped_steps))
                          : render::Cell::str("–")});
  return cells;
}

// "r3, r4" of the rows of a group.
std::string groupLabels(const Comparison& cmp, int group) {
  std::string out;
  for (const auto& row : cmp.rows)
    if (row.group == group) out += (out.empty() ? "" : ", ") + row.label;
  return out;
}

// What the verdicts rest on: the host's noise, the repeat groups, why rows show no speedup.
void measuringNotes(const Comparison& cmp, std::vector<std::string>& notes) {
  notes.push_back("Noise: " + records::noiseMessage(cmp.noise) + ".");
  notes.push_back("× train samples/s and × to target: the run's configuration against the baseline's, from all their "
                  "repeats (runs whose configs are equal but for name and seed), with a 95 % interval; faster or "
                  "slower only when the interval excludes 1 and the estimate is beyond ±" +
                  fmtFixed(cmp.min_effect * 100, 1) + " % (the practical threshold), else within noise.");
  notes.push_back("Target: " + cmp.target.describe() + ".");
  if (!cmp.anyRepeats()) notes.push_back("1 run each: no interval (repeat a configuration to get one).");
  for (int g = 0; g < cmp.groups; ++g) {
    const auto it = std::find_if(cmp.rows.begin(), cmp.rows.end(), [&](const ComparisonRow& r) { return r.group == g; });
    if (it->group_runs < 2) continue;
    notes.push_back("Repeats (" + std::to_string(it->group_runs) + " runs of one configuration" +
                    (g == 0 ? ", the baseline's" : "") + "): " + groupLabels(cmp, g) +
                    (g == 0 ? "; a repeat of the baseline differs from it by noise alone." : "."));
  }
  const ComparisonRow& base = cmp.rows.front();
  const bool repeatsCarry = std::any_of(cmp.rows.begin(), cmp.rows.end(), [](const ComparisonRow& r) { return r.showsSpeedup(); });
  if (!base.host_changed.empty() && repeatsCarry)
    notes.push_back(base.label + " (the baseline): " + base.host_changed +
                    "; its clean repeats carry the estimates, and no multiplier against this run alone is shown.");
  for (const auto& row : cmp.rows) {
    const std::string why = row.noSpeedupReason();
    if (why.empty() || row.repeat_of_baseline || !row.contended.empty()) continue;  // contention has its own note
    notes.push_back(row.label + ": " + why + (row.not_comparable.empty() ? "" : "; no multiplier") + ".");
  }
}

std::vector<render::Cell> comparisonCellsWithMfu(const ComparisonRow& row) {
  std::vector<render::Cell> cells = comparisonCells(row);
  for (auto& c : mfuCells(row.m.flops)) cells.push_back(std::move(c));
  return cells;
}

}  // namespace

render::Table comparisonTable(const Comparison& cmp) {
  render::Table t;
  const std::string target = fmtAccuracy(cmp.target_acc);
  t.title = "Runs against the baseline (target val acc " + cmp.target.describe() + ")";
  t.columns = {
      {"run", "Run", ""},
      {"status", "Status", ""},
      {"differs", "Differs from baseline", ""},
      {"epochs", "Epochs", ""},
      {"effective_lr", "Effective lr", ""},
      {"time_per_epoch_s", "Time/epoch", "s"},
      {"speedup_epoch", "× epoch", "x"},
      {"train_samples_per_s", "Train samples/s", "1/s"},
      {"speedup_throughput", "× train samples/s", "x"},
      {"speedup_throughput_lo", "× train samples/s 95 % low", "x"},
      {"speedup_throughput_hi", "× train samples/s 95 % high", "x"},
      {"verdict_throughput", "Verdict (train samples/s)", ""},
      {"wall_s", "Wall time", "s"},
      {"speedup_wall", "× wall", "x"},
      {"time_to_target_s", "Time to " + target, "s"},
      {"speedup_target", "× to target", "x"},
      {"speedup_target_lo", "× to target 95 % low", "x"},
      {"speedup_target_hi", "× to target 95 % high", "x"},
      {"verdict_target", "Verdict (to target)", ""},
      {"best_val_acc", "Best val acc", "fraction"},
      {"delta_best_pp", "Δ best", "pp"},
      {"final_val_acc", "Final val acc", "fraction"},
      {"delta_final_pp", "Δ final", "pp"},
      {"eval_s", "Eval s", "s"},
      {"time_to_first_step_s", "First step s", "s"},
      {"run_wall_s", "Run wall s", "s"},
      {"used_cores", "Cores used", "cores"},
      {"other_load_cores", "Other load", "cores"},
      {"peak_mem_bytes", "Peak memory", "bytes"},
      {"mem_ratio", "Memory ratio", "x"},
      {"skipped_steps", "fp16 skipped", ""},
  };
  for (auto& c : mfuColumns()) t.columns.push_back(std::move(c));
  bool anyWarmup = false, anyPartial = false;
  std::vector<std::string> contended;
  for (const auto& row : cmp.rows) {
    t.rows.push_back(comparisonCellsWithMfu(row));
    anyWarmup = anyWarmup || row.m.throughputIncludesWarmup();
    anyPartial = anyPartial || row.m.wall_partial;
    if (!row.contended.empty()) contended.push_back(row.label + ": " + row.contended);
  }
  t.notes.push_back("Speedups are baseline ÷ run for times and run ÷ baseline for train samples/s; > 1× is faster. "
                    "× epoch and × wall: this run against the baseline run alone (no interval).");
  measuringNotes(cmp, t.notes);
  t.notes.push_back("Train samples/s: samples trained ÷ seconds in training steps (no evaluation, checkpoints or set-up). "
                    "Wall time: the trainer's clock (set-up, training, evaluation); run wall s: the whole command.");
  t.notes.push_back("Time to target: first crossing of the target val acc, interpolated linearly between evaluations; "
                    "it counts everything (set-up, evaluation, checkpoints).");
  t.notes.push_back("Effective lr: optim.lr × its optim.lr_scaling factor for the run's devices (linear ×N, sqrt ×√N), "
                    "reached after a short warm-up; with none it is optim.lr whatever the global batch.");
  if (anyWarmup) t.notes.push_back("* includes the warm-up (too few step events to leave it out; from epoch events or the first step event).");
  if (anyPartial) t.notes.push_back("\"so far\": the run has not ended (no end event, no summary.json).");
  for (const auto& c : contended)
    t.notes.push_back("Contended, speedups not shown — " + c + ". Rerun on an idle machine.");
  std::vector<std::optional<proto::FlopsFigures>> flops;
  for (const auto& row : cmp.rows) flops.push_back(row.m.flops);
  for (auto& n : mfuNotes(flops)) t.notes.push_back(std::move(n));
  return t;
}

}  // namespace wb::compare
