#include "wb/ladder/ladder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/stats/estimate_json.h"
#include "wb/proto/rundir.h"
#include "wb/proto/flops_record.h"
#include "wb/compare/mfu.h"
#include "wb/records/noise.h"

namespace wb::ladder {
using namespace records;
using namespace compare;
using namespace advice;
using namespace report;
using namespace stats;   // estimates, verdicts and the rounds rule
using namespace render;  // tables and charts
using nlohmann::json;

namespace {

struct Range {
  std::optional<double> mid, lo, hi;
};
Range rangeOf(const std::vector<double>& v) {
  if (v.empty()) return {};
  return {median(v), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

std::string withRange(const std::optional<double>& mid, const std::optional<double>& lo, const std::optional<double>& hi,
                      int n) {
  if (!mid) return "–";
  std::string s = fmtSeconds(*mid);
  if (n >= 2 && lo && hi) s += " (" + fmtSeconds(*lo) + "–" + fmtSeconds(*hi) + ")";
  return s;
}


// The repeat whose wall time is the median: what advice and curves show for a step.
const RunRecord* representative(const LadderStepRuns& s, std::optional<double> target) {
  const RunRecord* best = nullptr;
  double bestDist = 0;
  std::vector<double> walls;
  for (const auto& r : s.runs)
    if (auto w = computeMetrics(r, target).wall_s) walls.push_back(*w);
  const double mid = median(walls);
  for (const auto& r : s.runs) {
    auto w = computeMetrics(r, target).wall_s;
    double dist = w && std::isfinite(mid) ? std::fabs(*w - mid) : 1e300;
    if (!best || dist < bestDist) best = &r, bestDist = dist;
  }
  return best;
}

}  // namespace

namespace {

// One step's runs: medians, ranges, problems, and the contention of its own measurements. Runs
// of pairs that do not count (contended) are left out of the times when counted ones exist; a
// step with only contended runs is itself contended.
LadderRow summarizeStep(const LadderStepRuns& s, std::optional<double> target, std::string* ownContention) {
  LadderRow row;
  row.step = s.step;
  row.settled = s.settled;
  row.not_run = s.not_run;
  row.decision = s.decision;
  std::vector<double> walls, targets, accs, mems, rates, gflops, pcts;
  std::vector<std::string> problems = s.failures;
  std::vector<RunMetrics> metrics;
  for (const auto& r : s.runs) {
    metrics.push_back(computeMetrics(r, target));
    ++row.repeats;
    row.run_dirs.push_back(r.dir);
    if (metrics.back().contention.contended) ++row.contended;
    if (r.status != "ok" && r.status != "early-stopped")
      problems.push_back(runLabel(r) + " " + r.status + (r.errors.empty() ? "" : ": " + r.errors.front()));
  }
  const bool allContended = row.contended > 0 && row.contended == row.repeats;
  for (const auto& m : metrics) {
    if (m.contention.contended && !allContended) continue;
    if (m.wall_s) walls.push_back(*m.wall_s);
    if (m.time_to_target_s) targets.push_back(*m.time_to_target_s), ++row.reached;
    if (m.best_val_acc) accs.push_back(*m.best_val_acc);
    if (m.train_samples_per_s) rates.push_back(*m.train_samples_per_s);
    if (m.peak_mem_bytes) mems.push_back(*m.peak_mem_bytes), row.mem_kind = m.peak_mem_kind;
    if (m.flops && m.flops->per_step > 0) gflops.push_back(m.flops->achieved_gflop_per_s);
    if (m.flops && m.flops->pctOfPeak()) pcts.push_back(*m.flops->pctOfPeak());
    if (m.contention.contended && ownContention->empty()) *ownContention = m.contention.note;
  }
  if (row.contended > 0 && !allContended)
    problems.push_back(std::to_string(row.contended) + " run(s) measured under contention left out");
  if (s.not_run) problems.push_back(kNotRunCancelled);
  const Range w = rangeOf(walls), t = rangeOf(targets);
  row.wall_s = w.mid, row.wall_min = w.lo, row.wall_max = w.hi;
  row.target_s = t.mid, row.target_min = t.lo, row.target_max = t.hi;
  if (!accs.empty()) row.val_acc = median(accs);
  if (!rates.empty()) row.train_sps = median(rates);
  if (!mems.empty()) row.peak_mem = median(mems);
  if (!gflops.empty()) row.gflop_per_s = median(gflops);
  if (!pcts.empty()) row.pct_of_peak = median(pcts);
  for (const auto& p : problems) row.problems += (row.problems.empty() ? "" : "; ") + p;
  return row;
}

void addNote(std::string& into, const std::string& who, const std::string& note) {
  if (note.empty()) return;
  into += (into.empty() ? "" : "; ") + who + note;
}

// Per-run values of the counted runs (all runs when `counted` is empty).
struct Values {
  std::vector<double> target, rate, wall;
};
Values valuesOf(const std::vector<RunRecord>& runs, const std::vector<bool>& counted, std::optional<double> target) {
  Values v;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!counted.empty() && (i >= counted.size() || !counted[i])) continue;
    const RunMetrics m = computeMetrics(runs[i], target);
    if (m.contention.contended && counted.empty()) continue;
    const double nan = std::nan("");
    v.target.push_back(m.time_to_target_s.value_or(nan));
    v.rate.push_back(m.train_samples_per_s.value_or(nan));
    v.wall.push_back(m.wall_s.value_or(nan));
  }
  return v;
}

// The host speed check's word on each used pair (aligned with valuesOf's values).
std::vector<bool> hostFlips(const LadderStepRuns& s, const std::vector<bool>& use) {
  const double checkBand = loadNoise(thisMachine()).hostKernelBand();
  std::vector<bool> flipped;
  for (size_t i = 0; i < s.references.size() && i < s.runs.size(); ++i)
    if (i < use.size() && use[i]) flipped.push_back(hostChangedOverRuns(s.references[i], s.runs[i], checkBand));
  return flipped;
}

// The step's speedups over the baseline: from its pairs when it has them, else from the groups.
void estimateStep(LadderRow& row, const LadderStepRuns& s, const LadderStepRuns& base, std::optional<double> target,
                  const Sequential& seq) {
  if (!s.references.empty()) {
    // With no pair counted, every pair gives the estimate and the row says it is contended (its
    // multipliers are then not shown as speedups).
    const bool anyCounted = std::find(s.counted.begin(), s.counted.end(), true) != s.counted.end();
    const std::vector<bool> use = anyCounted ? s.counted : std::vector<bool>(s.references.size(), true);
    if (!anyCounted) addNote(row.contention, "", "every pair was measured under contention");
    const Values a = valuesOf(s.references, use, target), b = valuesOf(s.runs, use, target);
    const VerdictRule rule = seq.at(static_cast<int>(std::count(use.begin(), use.end(), true)));
    const std::vector<bool> flipped = hostFlips(s, use);
    row.estimates.to_target = pairedSpeedup(a.target, b.target, rule, flipped);
    row.estimates.throughput = pairedRateSpeedup(a.rate, b.rate, rule, flipped);
    row.estimates.wall = pairedSpeedup(a.wall, b.wall, rule, flipped);
    return;
  }
  const Values a = valuesOf(base.runs, {}, target), b = valuesOf(s.runs, {}, target);
  const VerdictRule rule = Sequential{1, 1, seq.min_effect, seq.floor_band}.at(1);  // one look
  row.estimates.to_target = groupSpeedup(a.target, b.target, rule);
  row.estimates.throughput = groupRateSpeedup(a.rate, b.rate, rule);
  row.estimates.wall = groupSpeedup(a.wall, b.wall, rule);
}

std::optional<double> pointOf(const SpeedupEstimate& e) {
  return std::isfinite(e.point) ? std::optional<double>(e.point) : std::nullopt;
}

}  // namespace

Ladder summarizeLadder(const std::vector<LadderStepRuns>& steps, std::optional<double> target_acc, const Sequential& seq,
                       const LadderStatus& status) {
  Ladder ladder;
  ladder.target_user_set = target_acc.has_value();
  ladder.target_acc = target_acc;
  ladder.noise_band = seq.floor_band;
  ladder.verdicts = seq;
  ladder.status = status.status;
  ladder.cancelled_at = status.cancelled_at;
  ladder.greedy = status.greedy;
  if (status.status == proto::kStatusCancelled)
    ladder.status_note = "cancelled at step " + (status.cancelled_at.empty() ? std::string("?") : status.cancelled_at);
  std::vector<const RunRecord*> references;
  for (const auto& s : steps)
    if (s.step.key == "baseline")
      for (const auto& r : s.runs) references.push_back(&r);
  if (const auto fair = fairTargetOf(target_acc, references)) {
    ladder.target_acc = fair->acc;
    ladder.target_note = fair->describe();
  }
  for (const auto& s : steps) {  // by parts the baseline ran no runs: the steps' target is the reference runs'
    if (ladder.target_acc) break;
    if (!s.by_parts.is_object() || !s.by_parts.value("target_acc", json()).is_number()) continue;
    ladder.target_acc = s.by_parts["target_acc"].get<double>();
    ladder.target_from_references = true;
    ladder.target_note = "the experiment's reference runs' fair target (their lowest best less its spread)";
  }
  // Indices, not pointers: the rows vector grows. own[i]: row i's own contention.
  std::optional<size_t> baseline, previous;
  std::vector<std::string> own;
  ladder.rows.reserve(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const LadderStepRuns& s = steps[i];
    own.emplace_back();
    ladder.rows.push_back(summarizeStep(s, ladder.target_acc, &own.back()));
    LadderRow& added = ladder.rows[i];
    if (s.by_parts.is_object()) applyByParts(added, s.by_parts);
    if (s.step.key == "baseline") baseline = i;
    addNote(added.contention, "", own[i]);
    if (baseline && !s.step.skipped && !s.runs.empty()) {
      const LadderRow& base = ladder.rows[*baseline];
      if (*baseline == i) {
        added.cumulative = speedupOf(base.wall_s, added.wall_s);
        added.cumulative_target = speedupOf(base.target_s, added.target_s);
      } else {
        estimateStep(added, s, steps[*baseline], ladder.target_acc, seq);
        added.cumulative = pointOf(added.estimates.wall);
        added.cumulative_target = added.target_s ? pointOf(added.estimates.to_target) : std::nullopt;
        addNote(added.contention, "the baseline: ", own[*baseline]);
      }
      if (!s.step.isolated && !status.greedy && previous && i != *baseline) {
        const LadderRow& prev = ladder.rows[*previous];
        const Values a = valuesOf(steps[*previous].runs, {}, ladder.target_acc), b = valuesOf(s.runs, {}, ladder.target_acc);
        added.estimates.marginal_to_target = groupSpeedup(a.target, b.target, Sequential{1, 1, seq.min_effect, seq.floor_band}.at(1));
        added.marginal = speedupOf(prev.wall_s, added.wall_s);
        added.marginal_target = added.target_s ? pointOf(added.estimates.marginal_to_target) : std::nullopt;
        if (*previous != *baseline) addNote(added.contention, "the step before: ", own[*previous]);
      }
    }
    if (!s.step.isolated && !s.step.skipped && added.wall_s) previous = i;
  }
  ladder.answer = ladderAnswer(ladder);
  return ladder;
}

const LadderRow* keptRow(const Ladder& ladder) {
  for (const auto& row : ladder.rows)
    if (row.step.key == kKeptStep) return &row;
  return nullptr;
}

LadderHeadline ladderHeadline(const LadderRow& row) {
  LadderHeadline h;
  if (row.val_acc) h.detail = "acc " + fmtFixed(*row.val_acc * 100.0, 1) + " %";
  if (row.step.skipped) return {std::nullopt, "skipped", "", false, {}, {}};
  if (row.not_run && row.repeats == 0) return {std::nullopt, kNotRunCancelled, "", false, {}, {}};
  if (row.repeats == 0) return {std::nullopt, "–", "", false, {}, {}};
  if (!row.contention.empty()) h.text = kContendedText;
  else if (!row.target_s) h.text = "not reached";
  else if (!row.cumulative_target) h.text = "–";
  else if (row.step.key == "baseline") h.speedup = row.cumulative_target, h.text = fmtSpeedup(*row.cumulative_target);
  else {
    const SpeedupEstimate& e = row.estimates.to_target;
    h.speedup = row.cumulative_target;
    h.text = std::isfinite(e.point) ? formatEstimate(e) : fmtSpeedup(*row.cumulative_target) + " (no interval)";  // older files
    h.emphasise = emphasise(e);
    if (drawsInterval(e)) h.lo = e.lo, h.hi = e.hi;  // a bound, or an interval that is no measurement, draws no error bar
  }
  return h;
}

namespace {

// "not reached · 62.8 %": the headline and the accuracy behind it, in one cell.
Cell headlineCell(const LadderRow& row) {
  const LadderHeadline h = ladderHeadline(row);
  if (h.speedup) return Cell::num(h.text, *h.speedup);
  if (h.text == "not reached" && row.val_acc) return Cell::str(h.text + " · " + fmtFixed(*row.val_acc * 100.0, 1) + " %");
  return Cell::str(h.text);
}

Cell targetTimeCell(const LadderRow& row) {
  if (!row.target_s) return Cell::str(row.repeats == 0 ? "–" : "not reached");
  Cell c = Cell::num(withRange(row.target_s, row.target_min, row.target_max, row.reached), *row.target_s);
  if (row.reached < row.repeats) c.text += " (" + std::to_string(row.reached) + "/" + std::to_string(row.repeats) + " reached)";
  return c;
}

// An estimate's cell: "1.31× [1.12, 1.52] faster", its point as the number. A ladder.json of an
// older version has the figure (`fallback`) without an estimate: "15.1× (no interval)".
Cell estimateCell(const SpeedupEstimate& e, bool contended, std::optional<double> fallback = std::nullopt) {
  if (contended) return Cell::str(kContendedText);
  if (!std::isfinite(e.point))
    return fallback ? Cell::num(fmtSpeedup(*fallback) + " (no interval)", *fallback) : Cell::str("–");
  return Cell::num(formatEstimate(e), e.point);
}
Cell boundCell(const LadderHeadline& h, bool low) {
  const auto& v = low ? h.lo : h.hi;
  return v ? Cell::num(fmtSpeedup(*v), *v) : Cell::str("–");
}

std::string pairsText(const LadderRow& row) {
  if (row.step.key == "baseline") return std::to_string(row.repeats) + " run(s)";
  if (row.settled == "by parts") return "by parts";  // no pairs: the try's parts (its note)
  const int n = row.estimates.to_target.pairs > 0 ? row.estimates.to_target.pairs : row.estimates.wall.pairs;
  std::string t = std::to_string(n);
  if (!row.settled.empty()) t += " (" + row.settled + ")";
  return t;
}

// One row of ladderTable, `columns` cells wide.
std::vector<Cell> ladderCells(const LadderRow& row, const std::string& stepName, size_t columns) {
  std::vector<Cell> cells{Cell::str(stepName), Cell::str(row.step.added)};
  if (row.step.skipped || (row.not_run && row.repeats == 0)) {
    while (cells.size() + 1 < columns) cells.push_back(Cell::str("–"));
    cells.push_back(Cell::str(row.step.skipped ? "skipped: " + row.step.note : std::string(kNotRunCancelled)));
    return cells;
  }
  const bool contended = !row.contention.empty();
  const bool isBaseline = row.step.key == "baseline";
  Cell wall = optCell(row.wall_s, fmtSeconds);
  wall.text = withRange(row.wall_s, row.wall_min, row.wall_max, row.repeats);
  Cell mem = optCell(row.peak_mem, fmtBytes);
  if (row.peak_mem) mem.text += " (" + row.mem_kind + ")";
  std::string noteText = row.step.note;
  if (contended) noteText += (noteText.empty() ? "" : "; ") + std::string("contended: ") + row.contention;
  if (!row.problems.empty()) noteText += (noteText.empty() ? "" : "; ") + row.problems;
  const bool reached = row.target_s.has_value();
  const LadderHeadline h = ladderHeadline(row);
  cells.insert(cells.end(),
               {Cell::str(pairsText(row)), targetTimeCell(row), headlineCell(row), boundCell(h, true), boundCell(h, false),
                reached && !isBaseline ? estimateCell(row.estimates.marginal_to_target, contended, row.marginal_target)
                                       : Cell::str("–"),
                optCell(row.val_acc, fmtAccuracy), optCell(row.train_sps, fmtRate),
                isBaseline ? Cell::str("–") : estimateCell(row.estimates.throughput, contended), wall,
                isBaseline ? speedupCell(row.cumulative, contended) : estimateCell(row.estimates.wall, contended, row.cumulative),
                mem, optCell(row.gflop_per_s, fmtGflops),
                row.pct_of_peak ? Cell::num(fmtFixed(*row.pct_of_peak, *row.pct_of_peak < 10 ? 2 : 1) + " %",
                                            *row.pct_of_peak)
                                : Cell::str("–"),
                Cell::str(noteText)});
  return cells;
}

// Removes the column `key` and its cell from every row.
void dropColumn(Table& t, const std::string& key) {
  const auto it = std::find_if(t.columns.begin(), t.columns.end(), [&](const Column& c) { return c.key == key; });
  if (it == t.columns.end()) return;
  const size_t at = size_t(it - t.columns.begin());
  t.columns.erase(it);
  for (auto& row : t.rows)
    if (row.size() > at) row.erase(row.begin() + long(at));
}

}  // namespace

Table ladderTable(const Ladder& ladder) {
  Table t;
  const std::string target = ladder.target_acc ? fmtAccuracy(*ladder.target_acc) : std::string("target");
  t.title = "Speedup ladder (target val acc " +
            (ladder.target_acc ? target + (ladder.target_user_set          ? ", set by the user)"
                                           : ladder.target_from_references ? ", the reference runs')"
                                                                           : ", the baseline's best)")
                               : std::string("unknown: the baseline has no evaluation)"));
  if (!ladder.status_note.empty()) t.title += " — " + ladder.status_note;
  t.columns = {{"step", "Step", ""},
               {"added", "What was added", ""},
               {"pairs", "Pairs", ""},
               {"time_to_target_s", "Time to " + target, "s"},
               {"cumulative_target", "× to target", "x"},
               {"cumulative_target_lo", "95 % low", "x"},
               {"cumulative_target_hi", "95 % high", "x"},
               {"marginal_target", "Step × to target", "x"},
               {"val_acc", "Best val acc", "fraction"},
               {"train_samples_per_s", "Train samples/s", "1/s"},
               {"throughput", "× samples/s", "x"},
               {"wall_s", "Wall time", "s"},
               {"cumulative", "× wall", "x"},
               {"peak_mem_bytes", "Peak memory", "bytes"},
               {"gflop_per_s", "GFLOP/s", "GFLOP/s"},
               {"pct_of_peak", "% of peak", "%"},
               {"note", "Note", ""}};
  if (ladder.greedy) t.columns.insert(t.columns.begin() + 3, {"decision", "Kept?", ""});
  int index = 0;
  bool anyContended = false;
  for (const auto& row : ladder.rows) {
    const std::string name = row.step.isolated ? "alone" : row.step.key == kKeptStep ? "kept" : std::to_string(index++);
    auto cells = ladderCells(row, name, t.columns.size() - (ladder.greedy ? 1 : 0));
    if (ladder.greedy) cells.insert(cells.begin() + 3, Cell::str(row.decision.empty() ? "–" : row.decision));
    t.rows.push_back(std::move(cells));
    anyContended = anyContended || !row.contention.empty();
  }
  if (ladder.greedy) {
    dropColumn(t, "marginal_target");  // × to target is already the step's own: against what was kept before it
    t.title.insert(std::string("Speedup ladder").size(), ", greedy");
    t.notes.push_back("Greedy: each step is measured against the configuration kept before it (the baseline plus the "
                      "steps marked kept), so × to target is that step's own speedup; only a step clearly faster "
                      "is kept: one within noise, slower, failed or short of the target is dropped and left out of "
                      "what follows. The last row, kept, "
                      "is the configuration kept, against the baseline: the ladder's answer. A step whose Pairs say "
                      "\"by parts\" was measured as `workbench-cli try` measures by parts (its note gives the split; its "
                      "folder holds its try.json); the others as pairs.");
  } else {
    t.notes.push_back("× to target (the headline): the baseline's time to the target accuracy ÷ this step's, so the "
                      "speedup is at equal accuracy; \"not reached\" gives the accuracy the step reached instead.");
  }
  t.notes.push_back(std::string(ladder.greedy ? "Pairs" : "Each step runs as pairs with the baseline") +
                    " (reference then step, then step then reference, ...): "
                    "the speedup is the geometric mean of the pairs' ratios with its interval; one pair has no "
                    "interval. Pairs: how many, and why no more were run. " + describeRule(ladder.verdicts));
  if (!ladder.target_note.empty()) t.notes.push_back("Target: " + ladder.target_note + ".");
  t.notes.push_back(std::string(ladder.greedy ? "" : "Step ×: the step before ÷ this step, from their runs (not paired). ") +
                    "× wall: the same on the training loop's time, whatever accuracy was reached. Train samples/s: "
                    "training steps only.");
  if (anyContended)
    t.notes.push_back("contended: measured while another process used the CPU; the speedups are not shown "
                      "(see the note) — rerun the ladder on an idle machine.");
  t.notes.push_back(std::string("GFLOP/s: training FLOPs per step (") + proto::kFlopsConventionShort +
                    ") x steps ÷ seconds in training steps; % of peak: against this machine's measured peak "
                    "at the step's precision (its fastest kernel) (workbench-cli probe peak; \"–\" without one).");
  return t;
}

Drawing ladderChart(const Ladder& ladder) { return barChart(ladderBars(ladder)); }

namespace {

std::string barLabel(const LadderRow& row) {
  std::string label = row.step.key == "baseline" || row.step.key == kKeptStep ? row.step.key : "+ " + row.step.key;
  std::replace(label.begin(), label.end(), '_', ' ');
  return label;
}

// Without a target accuracy nothing is at equal accuracy: wall time, and the title says so.
BarChartSpec wallBars(const Ladder& ladder) {
  BarChartSpec spec;
  spec.title = "Speedup ladder: wall-time speedup (no target accuracy: the baseline has no evaluation)";
  spec.y_label = "wall-time speedup (×)";
  for (const auto& row : ladder.rows) {
    if (row.step.isolated) continue;
    Bar b;
    b.label = barLabel(row);
    const bool valid = row.cumulative && row.contention.empty() && !row.step.skipped;
    const bool isBaseline = row.step.key == "baseline";
    b.skipped = !valid;
    b.value = valid ? *row.cumulative : 0;
    b.annotation = valid ? (isBaseline ? fmtSpeedup(*row.cumulative) : formatEstimate(row.estimates.wall))
                         : row.step.skipped ? "skipped" : !row.contention.empty() ? kContendedText
                         : row.not_run ? kNotRunCancelled : "no result";
    b.bold = valid && !isBaseline && emphasise(row.estimates.wall);
    if (valid && !isBaseline && drawsInterval(row.estimates.wall)) b.lo = row.estimates.wall.lo, b.hi = row.estimates.wall.hi;
    spec.bars.push_back(b);
  }
  return spec;
}

}  // namespace

BarChartSpec ladderBars(const Ladder& ladder) {
  if (!ladder.target_acc) return wallBars(ladder);
  BarChartSpec spec;
  spec.title = ladder.greedy ? "Speedup ladder (greedy): each step's speedup to " + fmtAccuracy(*ladder.target_acc) +
                                   " val acc over the configuration kept before it; kept: over the baseline"
                             : "Speedup ladder: speedup to " + fmtAccuracy(*ladder.target_acc) + " val acc over the baseline";
  spec.y_label = "speedup at equal accuracy (×)";
  for (const auto& row : ladder.rows) {
    if (row.step.isolated) continue;
    const LadderHeadline h = ladderHeadline(row);
    Bar b;
    b.label = barLabel(row);
    b.skipped = !h.speedup;
    b.value = h.speedup.value_or(0);
    b.annotation = h.text;
    b.detail = h.detail;
    if (!row.decision.empty())  // "dropped · acc 71.2 %"
      b.detail = row.decision.substr(0, row.decision.find(':')) + (h.detail.empty() ? "" : " · " + h.detail);
    b.bold = h.emphasise;
    if (h.lo && h.hi) b.lo = *h.lo, b.hi = *h.hi;
    spec.bars.push_back(b);
  }
  return spec;
}

Report buildLadderReport(const Ladder& ladder, const std::vector<LadderStepRuns>& steps, const WorkersAdviceFor& workers) {
  const auto adviceFor = [&](const RunRecord& run) { return workers ? workers(run) : ruleOfThumbFor(run); };
  Report r;
  r.title = "Speedup ladder";
  r.answer = ladder.answer;
  r.short_table = ladderAnswerTable(ladder);
  r.intro = "The baseline runs with every speedup off; each following step adds one speedup to the previous step. "
            "What this machine cannot do is skipped with the reason. The headline is the speedup at equal accuracy (time to "
            "the target accuracy); a step that never reached the target has none and shows the accuracy it reached. "
            "A step measured while another process used the CPU shows no speedup.";
  r.tables.push_back(ladderTable(ladder));
  r.figures.push_back({"ladder", ladderChart(ladder), "ladder.svg"});

  std::vector<const RunRecord*> curves;
  const RunRecord* previous = nullptr;
  for (const auto& s : steps) {
    const RunRecord* rep = representative(s, ladder.target_acc);
    if (!rep) continue;
    const RunMetrics m = computeMetrics(*rep, ladder.target_acc);
    // Advice against the step this one builds on (isolated steps: the baseline).
    const RunRecord* ref = s.step.isolated ? (curves.empty() ? nullptr : curves.front()) : previous;
    std::optional<RunMetrics> rm;
    if (ref) rm = computeMetrics(*ref, ladder.target_acc);
    std::string label = s.step.key + (s.step.isolated ? " (alone)" : "") + " — " + runLabel(*rep);
    const WorkersAdvice repWorkers = adviceFor(*rep);
    auto verdicts = advise(*rep, m, ref, rm ? &*rm : nullptr, &repWorkers);
    // A cumulative step repeats what the step before it was told: show only what is new.
    if (ref && !s.step.isolated) {
      const WorkersAdvice refWorkers = adviceFor(*ref);
      const auto before = advise(*ref, *rm, nullptr, nullptr, &refWorkers);
      verdicts.erase(std::remove_if(verdicts.begin(), verdicts.end(),
                                    [&](const auto& v) {
                                      return std::any_of(before.begin(), before.end(),
                                                         [&](const auto& b) { return b.code == v.code && b.text == v.text; });
                                    }),
                     verdicts.end());
    }
    r.advice.push_back({label, std::move(verdicts)});
    if (!s.step.isolated) {
      curves.push_back(rep);
      previous = rep;
    }
    if (r.machine.empty()) r.machine = machineInfo(rep->env);
  }
  if (!curves.empty()) r.figures.push_back({"accuracy", accuracyCurves(curves), ""});
  r.data["ladder"] = ladderJson(ladder);
  return r;
}

}  // namespace wb::ladder
