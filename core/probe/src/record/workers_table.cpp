// The worker probe's table and chart.
#include <algorithm>
#include <cmath>

#include "wb/probe/record.h"

namespace wb::probe {
using render::Cell;

namespace {
Cell speedupCell(const ProbeResult& r, const ProbeRow* ref, const ProbeRow& row) {
  if (!ref || ref->samples_per_s <= 0) return Cell::str("–");
  if (ref == &row) return Cell::num(wb::fmtSpeedup(1.0), 1.0);
  const stats::SpeedupEstimate e = r.speedupOver(*ref, row);
  if (e.hasInterval()) return Cell::num(stats::formatEstimate(e), e.point);
  const double x = row.samples_per_s / ref->samples_per_s;
  return Cell::num(wb::fmtSpeedup(x), x);
}

std::string roundsNote(const ProbeResult& r) {
  std::string out = "Each candidate: the real loader and real training steps, " + wb::fmtFixed(r.seconds_per_round, 1) +
                    " s a round after a warm-up, in " + std::to_string(r.rounds) +
                    " interleaved rounds (every count once a round)";
  const stats::RoundsNoise noise = r.noise();
  if (noise.df > 0)
    out += "; the rounds' noise is ±" + wb::fmtFixed(r.noiseBand() * 100, 1) + " % (" + std::to_string(noise.df) +
           " df), each × a median of per-round ratios with its 95 % interval" +
           (r.settled() ? "" : " (not settled: more rounds could change the choice)");
  return out + ". Data ms/step is the wait for the next batch, step ms the rest of the step; other load: cores "
               "other processes used meanwhile.";
}
}  // namespace

render::Table probeTable(const ProbeResult& r) {
  render::Table t;
  t.title = "Loader workers on this machine (" + std::to_string(r.cores) + " cores, " + r.device + ")";
  const ProbeRow* ref = r.reference();
  const std::string vs = "× vs " + std::to_string(ref ? ref->workers : 0) + " workers";
  t.columns = {{"workers", "Workers", ""},         {"samples_per_s", "Samples/s", "1/s"},
               {"vs_0", vs, "x"},                  {"data_ms", "Data ms/step", "ms"},
               {"step_ms", "Step ms", "ms"},       {"steps", "Steps timed", ""},
               {"other_cores", "Other load", "cores"}, {"pick", "", ""}};
  for (const auto& row : r.rows) {
    std::vector<Cell> cells;
    cells.push_back(Cell::num(std::to_string(row.workers), row.workers));
    cells.push_back(Cell::num(wb::fmtFixed(row.samples_per_s, 0), row.samples_per_s));
    cells.push_back(speedupCell(r, ref, row));
    cells.push_back(Cell::num(wb::fmtFixed(row.data_ms, 2), row.data_ms));
    cells.push_back(Cell::num(wb::fmtFixed(row.step_ms, 2), row.step_ms));
    cells.push_back(Cell::num(std::to_string(row.steps), static_cast<double>(row.steps)));
    cells.push_back(Cell::num(wb::fmtFixed(row.other_cores, 1) + (isContended(row.other_cores) ? " (contended)" : ""),
                              row.other_cores));
    cells.push_back(Cell::str(row.workers == r.recommended ? "← recommended" : ""));
    t.rows.push_back(std::move(cells));
  }
  t.notes.push_back("Loader alone (0 workers, no model): " + wb::fmtFixed(r.loader_batches_per_s, 1) + " batches/s, " +
                    wb::fmtFixed(r.loader_samples_per_s, 0) + " samples/s.");
  t.notes.push_back("Training step alone (one cached batch of " + std::to_string(r.batch_size) + ", no loading): " +
                    wb::fmtFixed(r.step_alone_ms, 2) + " ms, " + wb::fmtFixed(r.step_samples_per_s, 0) + " samples/s.");
  t.notes.push_back(roundsNote(r));
  t.notes.push_back(r.verdict());
  return t;
}

render::Drawing probeChart(const ProbeResult& r) {
  // Bars from zero, so a 3 % difference looks like one; the dashed line is the reference's rate.
  render::BarChartSpec spec;
  const std::string model = r.experiment.value("model", std::string());
  spec.title = "Samples/s against loader workers" +
               (model.empty() ? std::string() : " (" + model + ", batch " + std::to_string(r.batch_size) + ", " +
                                                     std::to_string(r.cores) + " cores)");
  spec.y_label = "samples/s (real loader + steps)";
  const ProbeRow* ref = r.reference();
  spec.reference = ref ? ref->samples_per_s : 0.0;
  std::vector<const ProbeRow*> rows;
  for (const auto& row : r.rows) rows.push_back(&row);
  std::sort(rows.begin(), rows.end(), [](const ProbeRow* a, const ProbeRow* b) { return a->workers < b->workers; });
  for (const ProbeRow* row : rows) {
    render::Bar b;
    b.label = std::to_string(row->workers) + (row->workers == 1 ? " worker" : " workers");
    b.value = row->samples_per_s;
    b.annotation = wb::fmtFixed(row->samples_per_s, 0) + "/s";
    if (ref && ref != row && ref->samples_per_s > 0) {
      const stats::SpeedupEstimate e = r.speedupOver(*ref, *row);
      b.detail = wb::fmtSpeedup(std::isfinite(e.point) ? e.point : row->samples_per_s / ref->samples_per_s);
      if (e.hasInterval()) b.detail += " " + stats::verdictWord(e.verdict);
    }
    if (row->workers == r.recommended) b.detail += (b.detail.empty() ? "" : " · ") + std::string("recommended");
    spec.bars.push_back(std::move(b));
  }
  return render::barChart(spec);
}

}  // namespace wb::probe
