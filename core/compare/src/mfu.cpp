#include "wb/compare/mfu.h"

#include <set>

namespace wb::compare {

std::optional<proto::FlopsFigures> runFlops(const records::RunRecord& run) { return run.summary.flops; }

std::string fmtGflops(double g) {
  if (g >= 10000) return fmtFixed(g / 1000.0, 1) + "k";
  return fmtFixed(g, g < 10 ? 2 : g < 100 ? 1 : 0);
}

std::vector<render::Column> mfuColumns() {
  return {{"gflop_per_s", "GFLOP/s", "GFLOP/s"},
          {"pct_of_peak", "% of peak", "%"},
          {"pct_of_datasheet", "% of datasheet", "%"},
          {"compute_only_step_ms", "Compute-only step", "ms"},
          {"data_path_share", "Data path", "%"}};
}

namespace {

render::Cell pctCell(const std::optional<double>& pct, const std::string& absent) {
  if (!pct) return render::Cell::str(absent);
  return render::Cell::num(fmtFixed(*pct, *pct < 10 ? 2 : 1) + " %", *pct);
}

}  // namespace

std::vector<render::Cell> mfuCells(const std::optional<proto::FlopsFigures>& f) {
  // No figure rather than a 0 (a run cancelled before it measured a step).
  if (!f || !(f->per_step > 0) || !(f->achieved_gflop_per_s > 0)) return std::vector<render::Cell>(mfuColumns().size(), render::Cell::str("–"));
  std::vector<render::Cell> cells;
  cells.push_back(render::Cell::num(fmtGflops(f->achieved_gflop_per_s), f->achieved_gflop_per_s));
  cells.push_back(pctCell(f->pctOfPeak(), "no peak"));
  cells.push_back(pctCell(f->pctOfDatasheet(), f->no_datasheet.empty() ? "–" : "not in table"));
  cells.push_back(f->compute_only_step_ms
                      ? render::Cell::num(fmtFixed(*f->compute_only_step_ms, 2) + " ms", *f->compute_only_step_ms)
                      : render::Cell::str("–"));
  const auto share = f->dataPathShare();
  cells.push_back(share ? render::Cell::num(fmtFixed(*share * 100, 1) + " %", *share * 100) : render::Cell::str("–"));
  return cells;
}

std::vector<std::string> mfuNotes(const std::vector<std::optional<proto::FlopsFigures>>& flops) {
  std::set<std::string> peaks, missing, uncounted;
  bool any = false;
  for (const auto& f : flops) {
    if (!f || !(f->per_step > 0)) continue;
    any = true;
    if (f->peak) peaks.insert("% of peak: against " + f->peak->what + " (" + fmtGflops(f->peak->gflop_per_s) + " GFLOP/s)");
    else if (!f->no_peak.empty()) missing.insert("% of peak: " + f->no_peak);
    if (f->datasheet) peaks.insert("% of datasheet: against " + f->datasheet->what);
    else if (!f->no_datasheet.empty()) missing.insert("% of datasheet: " + f->no_datasheet);
    if (!f->uncounted.empty()) uncounted.insert("FLOPs " + f->uncounted + " (the rate is a lower bound)");
  }
  if (!any) return {};
  std::vector<std::string> notes = {
      std::string("GFLOP/s: training FLOPs per step (counted per layer from the model's shapes; ") +
      proto::kFlopsConventionShort + ") x steps ÷ seconds in training steps."};
  notes.insert(notes.end(), peaks.begin(), peaks.end());
  notes.insert(notes.end(), missing.begin(), missing.end());
  notes.insert(notes.end(), uncounted.begin(), uncounted.end());
  notes.push_back("Compute-only step: the same step on a batch already in memory (no loading, no copying), timed "
                  "after training; data path: the share of the real step beyond it.");
  return notes;
}

}  // namespace wb::compare
