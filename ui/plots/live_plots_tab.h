#pragma once
// LivePlots' insides, shared by its parts (not a public surface): the tab model (which series a
// tab draws and how far each graph has consumed its run's points) and the drawing helpers.
//   live_plots.cpp           the widget: controls, the runs it follows, the coalesced replot
//   live_plots_tabs.cpp      the tab kinds and their plots (set-up, palette, saving)
//   live_plots_curves.cpp    line tabs (loss, accuracy, throughput, memory, loss scale)
//   live_plots_steptime.cpp  the stacked step-time bars
#include <QHash>
#include <QString>
#include <QVector>

#include <functional>
#include <limits>
#include <vector>

#include "plots/fast_graph.h"
#include "plots/live_plots.h"
#include "plots/qcp.h"

namespace wb::ui {

namespace plots_detail {
constexpr double kMiB = 1024.0 * 1024.0;
constexpr int kAntialiasLimit = 200000;
// Points a sync takes at most: a first load of millions of points is taken in slices of about
// 20 ms, the events handled between them, and drawn once whole.
constexpr size_t kLoadSlice = 200000;
constexpr double kInf = std::numeric_limits<double>::infinity();

bool isDark(const QWidget* w);
const QVector<QColor>& runColors(bool dark);
const QVector<QColor>& partColors();
// As many legend columns as the widest entry allows at the plot's width.
void fitLegendColumns(QCustomPlot* plot);
// The axis's label, or its short form when the axis is too short to show it whole.
void fitAxisLabel(QCPAxis* axis, const QString& label, const QString& shortLabel);
}  // namespace plots_detail

struct LivePlots::SeriesDef {
  QString label;
  bool fromEvals = false;
  std::function<double(const StepPoint&, const RunSeries&)> stepY;
  std::function<double(const EvalPoint&)> evalY;
  std::function<bool(const RunSeries&)> applies;  // empty: always
  std::function<QString(const RunSeries&)> labelFor;  // empty: label
  bool smooth = false;
  bool markers = false;
  bool dashed = false;
  bool rightAxis = false;  // drawn against yAxis2 (TabDef::y2Label)
};

struct LivePlots::TabDef {
  QString key, title, yLabel;
  QString yShort;  // the y label where the plot is too short for yLabel (a small window, many legend rows)
  std::vector<SeriesDef> series;
  bool logY = false;
  bool zeroBased = false;
  bool bars = false;
  QString y2Label;         // non-empty: a right axis for the series with rightAxis
  QString y2Short;
  QString emptyWithRuns;  // shown when ticked runs have nothing for this tab ("" = a general line)
};

// One curve: its graph holds every point taken (smoothed when the series is).
struct LivePlots::GraphState {
  FastGraph* graph = nullptr;
  size_t consumed = 0;  // points of the run's series read
  double ema = kNaN;
  double xmin = plots_detail::kInf, xmax = -plots_detail::kInf;
  double ymin = plots_detail::kInf, ymax = -plots_detail::kInf;
  std::vector<double> unsmoothed;  // the graph's values before smoothing, while it is smoothed
  bool inOrder = true;             // the points came in key order: unsmoothed lines up with the graph's
  bool contiguous = true;          // no point read was left out: the graph's i-th point is the series' i-th
};

struct LivePlots::Tab {
  TabDef def;
  QCustomPlot* plot = nullptr;
  QHash<const Run*, std::vector<GraphState>> graphs;
  QVector<QCPBars*> bars;
  QCPItemText* emptyText = nullptr;
  bool stale = true;
  bool userZoomed = false;
  double smoothedWith = 0;  // the smoothing the curves hold
  bool dense = false;       // past kAntialiasLimit points: no antialiasing, 1-px lines
  bool loading = false;     // the last sync left points for the next slice
  XAxis keyedBy = XAxis::Step;  // the x the graphs' keys hold (the x axis may have changed since)
};

}  // namespace wb::ui
