// The early-stopping what-if: the run's evaluations replayed through the trainer's rule.
#include "wb/report/whatif.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "wb/common/early_stopping.h"
#include "wb/proto/config_json.h"
#include "wb/proto/fields.h"

namespace wb::report {
using nlohmann::json;
using records::RunRecord;
using records::runLabel;

namespace {

struct Point {        // one evaluated epoch
  int epoch = 0;
  double val_loss = 0, val_acc = 0;
  double t_end = 0;   // rank 0's t at the end of the epoch (after its evaluation)
  int64_t samples = 0;  // training samples seen before its evaluation (0 when not recorded)
};

// One point per epoch, in epoch order; a resumed run's re-evaluated epoch keeps its last value.
std::vector<Point> curveOf(const RunRecord& run) {
  std::map<int, Point> byEpoch;
  for (const auto& e : run.evals) byEpoch[e.epoch] = {e.epoch, e.val_loss, e.val_acc, e.t, e.samples};
  for (const auto& e : run.epochs)
    if (auto it = byEpoch.find(e.epoch); it != byEpoch.end()) it->second.t_end = e.t;
  std::vector<Point> out;
  for (const auto& [epoch, p] : byEpoch) out.push_back(p);
  return out;
}

EarlyStoppingConfig runRule(const RunRecord& run) { return proto::configAsWritten(run.config).speedups.early_stopping; }

double monitored(const EarlyStoppingConfig& c, const Point& p) {
  return c.monitor == choice::kMonitorValAcc ? p.val_acc : p.val_loss;
}

// Off (patience 0), the trainer keeps best.pt by plain improvement: min_delta plays no part.
WhatIfRow replay(const std::vector<Point>& curve, EarlyStoppingConfig rule, int patience, double min_delta) {
  rule.patience = patience;
  rule.min_delta = patience == 0 ? 0.0 : min_delta;
  EarlyStopping es(rule);
  WhatIfRow row;
  row.patience = patience;
  row.min_delta = rule.min_delta;
  size_t stopAt = curve.size() - 1;
  for (size_t i = 0; i < curve.size(); ++i) {
    const auto d = es.update(curve[i].epoch, monitored(rule, curve[i]));
    if (d.stop) {
      row.stops = true;
      row.reason = d.reason;
      stopAt = i;
      break;
    }
  }
  row.stop_epoch = curve[stopAt].epoch;
  row.epochs_saved = static_cast<int>(curve.size() - 1 - stopAt);
  row.best_epoch = es.bestEpoch();
  row.best_value = es.bestValue();
  for (const auto& p : curve)
    if (p.epoch == row.best_epoch) row.best_val_acc = p.val_acc;
  // A stopped run restores best.pt; one that trains on ends with its last weights.
  row.final_weights_epoch = row.stops && row.best_epoch >= 0 ? row.best_epoch : row.stop_epoch;
  return row;
}

void addSavings(WhatIfRow& row, const std::vector<Point>& curve, const WhatIf& w) {
  if (!row.stops) {
    if (!w.truncated) row.wall_saved_s = 0.0, row.saved_fraction = 0.0;
    return;
  }
  double stopT = 0;
  for (const auto& p : curve)
    if (p.epoch == row.stop_epoch) stopT = p.t_end;
  const double saved = curve.back().t_end - stopT;
  if (!(saved >= 0) || stopT <= 0) return;  // a clock that went back (another life): unknown
  row.wall_saved_s = saved;
  if (w.wall_s && *w.wall_s > 0) row.saved_fraction = saved / *w.wall_s;
}

std::string num(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

std::string monitorText(const WhatIf& w, double v) {
  if (!std::isfinite(v)) return "–";
  return w.monitor == choice::kMonitorValAcc ? fmtAccuracy(v) : fmtFixed(v, 4);
}

render::Cell stopCell(const WhatIf& w, const WhatIfRow& r) {
  if (r.patience == 0) return render::Cell::str("off: all " + std::to_string(w.last_epoch));
  if (r.stops) return render::Cell::num(std::to_string(r.stop_epoch), r.stop_epoch);
  if (w.truncated) return render::Cell::str("not within the " + std::to_string(w.evaluations) + " recorded");
  return render::Cell::str("does not stop");
}

std::vector<render::Cell> rowCells(const WhatIf& w, const WhatIfRow& r) {
  return {render::Cell::num(std::to_string(r.patience) + (r.as_run ? " (this run)" : ""), r.patience),
          r.patience == 0 ? render::Cell::str("–") : render::Cell::num(num(r.min_delta), r.min_delta),
          stopCell(w, r),
          r.stops || !w.truncated ? render::Cell::num(std::to_string(r.epochs_saved), r.epochs_saved) : render::Cell::str("–"),
          r.best_epoch >= 0 ? render::Cell::num(std::to_string(r.best_epoch), r.best_epoch) : render::Cell::str("–"),
          std::isfinite(r.best_value) ? render::Cell::num(monitorText(w, r.best_value), r.best_value) : render::Cell::str("–"),
          r.best_epoch >= 0 ? render::Cell::num(fmtAccuracy(r.best_val_acc), r.best_val_acc) : render::Cell::str("–"),
          render::Cell::num(std::to_string(r.final_weights_epoch) + (r.stops ? " (best.pt)" : ""), r.final_weights_epoch),
          render::optCell(r.wall_saved_s, fmtSeconds),
          r.saved_fraction ? render::Cell::num(fmtFixed(*r.saved_fraction * 100.0, 0) + " %", *r.saved_fraction * 100.0)
                           : render::Cell::str("–")};
}

std::vector<render::Column> columns(const WhatIf& w) {
  return {{"patience", "Patience", ""},
          {"min_delta", "Min Δ", ""},
          {"stop_epoch", "Stops after epoch", ""},
          {"epochs_saved", "Epochs saved", ""},
          {"best_epoch", "Best epoch", ""},
          {"best_value", "Best " + w.monitor, ""},
          {"best_val_acc", "Val acc at best", "fraction"},
          {"final_weights_epoch", "Final weights (epoch)", ""},
          {"wall_saved_s", "Wall saved", "s"},
          {"saved_pct", "Saved", "%"}};
}

constexpr const char* kRuleNote =
    "an evaluation improves when it beats the best by more than min Δ; the run stops `patience` evaluations "
    "after the best and restores best.pt.";
constexpr const char* kSavedNote =
    "Wall saved: rank 0's time at the end of the last recorded epoch minus at the end of the epoch it stops "
    "after (training, evaluation and checkpoints of the epochs it would skip); saved % is of the run's wall time.";

std::vector<std::string> notes(const WhatIf& w) {
  return {"Replays the run's " + std::to_string(w.evaluations) + " evaluations through the trainer's early-stopping rule (" +
              w.monitor + ", mode " + w.mode + "): " + kRuleNote,
          kSavedNote};
}

}  // namespace

WhatIf earlyStoppingWhatIf(const RunRecord& run, const WhatIfOptions& options) {
  WhatIf w;
  w.run = runLabel(run);
  const EarlyStoppingConfig rule = runRule(run);
  w.monitor = rule.monitor;
  w.mode = rule.mode == choice::kModeMax ? choice::kModeMax : choice::kModeMin;
  const auto curve = curveOf(run);
  w.evaluations = static_cast<int>(curve.size());
  w.last_epoch = curve.empty() ? 0 : curve.back().epoch;
  if (const json& e = run.configAt("train.epochs"); e.is_number_integer()) w.planned_epochs = e.get<int>();
  // A run that ended "ok" trained what it was asked (epochs or max_steps); one that stopped early,
  // was cancelled, failed or has not ended recorded only its first epochs.
  w.truncated = !run.finished || (run.status != "ok" && w.last_epoch < w.planned_epochs);
  if (run.last_t > 0) w.wall_s = run.last_t;
  if (curve.size() < 2) {
    w.problem = runLabel(run) + " has " + std::to_string(curve.size()) + " evaluation" + (curve.size() == 1 ? "" : "s") +
                ": an early-stopping what-if needs at least 2 (train it for 2 or more epochs)";
    return w;
  }
  for (int patience : options.patiences)
    for (double delta : options.min_deltas) {
      if (patience == 0 && delta != options.min_deltas.front()) continue;  // off: one row
      WhatIfRow row = replay(curve, rule, patience, delta);
      row.as_run = patience == rule.patience && (patience == 0 || delta == rule.min_delta);
      addSavings(row, curve, w);
      w.rows.push_back(std::move(row));
    }
  return w;
}

ReplayedStop replayEarlyStopping(const RunRecord& run, const EarlyStoppingConfig& rule) {
  ReplayedStop out;
  const std::vector<Point> curve = curveOf(run);
  if (curve.empty()) return out;
  const WhatIfRow row = replay(curve, rule, rule.patience, rule.min_delta);
  out.stops = row.stops;
  out.epoch = row.stop_epoch;
  out.reason = row.reason;
  for (const auto& p : curve)
    if (p.epoch == row.stop_epoch && p.samples > 0) out.samples = double(p.samples);
  return out;
}

render::Table whatIfTable(const WhatIf& w) {
  render::Table t;
  t.title = "Early-stopping what-if: " + w.run + " (" + std::to_string(w.evaluations) + " evaluations, monitor " +
            w.monitor + ")";
  t.columns = columns(w);
  for (const auto& r : w.rows) t.rows.push_back(rowCells(w, r));
  if (!w.problem.empty()) {
    t.notes.push_back(w.problem + ".");
    return t;
  }
  t.notes = notes(w);
  if (w.truncated)
    t.notes.push_back("The run recorded " + std::to_string(w.evaluations) + " of " + std::to_string(w.planned_epochs) +
                      " planned epochs (it stopped early or did not finish): what a setting that does not stop "
                      "within them would do later is unknown.");
  return t;
}

WB_FIELDS(WhatIfRow) {
  f("patience", e.patience), f("min_delta", e.min_delta), f("stops", e.stops), f("stop_epoch", e.stop_epoch);
  f("epochs_saved", e.epochs_saved), f("best_epoch", e.best_epoch), f("best_value", e.best_value);
  f("best_val_acc", e.best_val_acc), f("final_weights_epoch", e.final_weights_epoch);
  f("wall_saved_s", proto::orNull(e.wall_saved_s)), f("saved_fraction", proto::orNull(e.saved_fraction));
  f("reason", e.reason), f("as_run", e.as_run);
}

WB_FIELDS(WhatIf) {
  f("run", e.run), f("monitor", e.monitor), f("mode", e.mode), f("evaluations", e.evaluations);
  f("last_epoch", e.last_epoch), f("planned_epochs", e.planned_epochs), f("truncated", e.truncated);
  f("wall_s", proto::orNull(e.wall_s));
  f("problem", proto::derived(e.problem.empty() ? json() : json(e.problem)));  // null when there are rows
  f("rows", e.rows);
}

json whatIfJson(const WhatIf& w) {
  json out = json::object();
  proto::fieldsToJson(w, out);
  return out;
}

render::Table whatIfComparisonTable(const std::vector<const RunRecord*>& runs) {
  render::Table t;
  t.title = "Early-stopping what-if (from each run's validation curve, without training again)";
  std::vector<std::string> tooShort;
  for (const RunRecord* run : runs) {
    WhatIfOptions o;
    o.patiences = {1, 2, 3, 4, 5};
    o.min_deltas = {0.0};
    const EarlyStoppingConfig rule = runRule(*run);
    if (rule.min_delta > 0) o.min_deltas.push_back(rule.min_delta);
    const WhatIf w = earlyStoppingWhatIf(*run, o);
    if (t.columns.empty()) {
      t.columns = columns(w);
      t.columns.insert(t.columns.begin(), render::Column{"run", "Run", ""});
      t.columns[6] = {"best_value", "Best monitor", ""};
    }
    if (!w.problem.empty()) tooShort.push_back(w.problem);
    for (const auto& r : w.rows) {
      auto cells = rowCells(w, r);
      cells.insert(cells.begin(), render::Cell::str(w.run + " (" + w.monitor + ")"));
      t.rows.push_back(std::move(cells));
    }
  }
  if (!t.rows.empty()) {
    t.notes.push_back(std::string("Each run's evaluations replayed through the trainer's early-stopping rule (its monitor "
                                  "and mode): ") + kRuleNote);
    t.notes.push_back(kSavedNote);
  }
  for (const auto& p : tooShort) t.notes.push_back(p + ".");
  return t;
}

}  // namespace wb::report
