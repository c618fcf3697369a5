// Line tabs (loss, accuracy, throughput, memory, loss scale): each graph takes only the points
// its run appended since the last sync, with optional EMA smoothing; axes fit unless zoomed.
#include <QMouseEvent>
#include <QPainter>
#include <QPixmap>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "plots/live_plots_tab.h"
#include "runs/runs_model.h"

namespace wb::ui {

using plots_detail::kAntialiasLimit;
using plots_detail::kInf;

namespace {
constexpr size_t kReadAhead = 32;  // points: about a microsecond of a pass ahead

// The field an evaluation's x is read from, under each choice of x axis (a step's x is read from
// its series' keys).
double EvalPoint::*evalKeyField(LivePlots::XAxis axis) {
  switch (axis) {
    case LivePlots::XAxis::Step: return &EvalPoint::step;
    case LivePlots::XAxis::Epoch: return &EvalPoint::epoch;
    case LivePlots::XAxis::Wall: return &EvalPoint::t;
    case LivePlots::XAxis::Samples: return &EvalPoint::samples;
  }
  return &EvalPoint::step;
}
}  // namespace

// A series' i-th point as a graph holds it: x under the chosen axis, y as its definition reads
// it (before smoothing). The one reader for a first load and for rewriting the keys.
struct LivePlots::PointReader {
  PointReader(const SeriesDef& d, const RunSeries& r, XAxis axis)
      : def(d), rs(r), stepKeys(r.stepKeys(axis)), evalKey(evalKeyField(axis)) {}
  size_t size() const { return def.fromEvals ? rs.evals().size() : rs.steps().size(); }
  double x(size_t i) const { return def.fromEvals ? rs.evals()[i].*evalKey : stepKeys[i]; }
  double y(size_t i) const { return def.fromEvals ? def.evalY(rs.evals()[i]) : def.stepY(rs.steps()[i], rs); }
  // A pass over a series reads one field of a wide point each step: memory latency, not work,
  // unless the points a few dozen ahead are on their way.
  void prefetch(size_t i) const {
#if defined(__GNUC__)
    if (i < size()) __builtin_prefetch(def.fromEvals ? static_cast<const void*>(&rs.evals()[i]) : &rs.steps()[i]);
#else
    (void)i;
#endif
  }

  const SeriesDef& def;
  const RunSeries& rs;
  const std::vector<double>& stepKeys;
  double EvalPoint::*evalKey;
};

QString LivePlots::xLabel() const {
  switch (xAxis_) {
    case XAxis::Step: return QStringLiteral("step");
    case XAxis::Epoch: return QStringLiteral("epoch");
    case XAxis::Wall: return QStringLiteral("wall time (s)");
    case XAxis::Samples: return QStringLiteral("samples seen");
  }
  return {};
}

// The curve's pen and markers. A dense tab (past kAntialiasLimit points, drawn without
// antialiasing) draws 1-px lines: a wide pen goes through Qt's stroker, several times slower, for
// curves that are already a band of pixel columns; the baseline keeps its ink colour.
void LivePlots::styleGraph(QCPGraph* graph, const Run* run, const SeriesDef& def, bool dense) {
  const bool base = run == model_->baseline();
  QPen pen(colorFor(run));
  pen.setWidthF(dense ? 1.0 : base ? 2.6 : 1.5);
  if (def.dashed) pen.setStyle(Qt::DashLine);
  graph->setPen(pen);
  graph->setScatterStyle(def.markers ? markerStyle(pen.color(), base ? 7 : 6, base ? 2.6 : 1.5) : QCPScatterStyle());
  graph->setAdaptiveSampling(true);
}

// A curve of one point (a run shorter than its log interval: one step event) has no line to draw:
// it gets the markers until a second point comes, so the run is not missing from the plot.
void LivePlots::showLonePoint(QCPGraph* graph, const Run* run, const SeriesDef& def, bool dense) {
  if (def.markers) return;
  const bool lone = graph->data()->size() == 1;
  if (lone == !graph->scatterStyle().isNone()) return;
  if (!lone) {
    styleGraph(graph, run, def, dense);
    return;
  }
  const bool base = run == model_->baseline();
  graph->setScatterStyle(markerStyle(graph->pen().color(), base ? 7 : 6, base ? 2.6 : 1.5));
}

// A circle marker (solid outline even on a dashed curve, filled with the plot's base colour),
// drawn once into a pixmap: a hundred evaluations of twenty runs blit it instead of stroking 2,000
// ellipses a frame.
QCPScatterStyle LivePlots::markerStyle(const QColor& color, int size, double width) {
  const qreal dpr = devicePixelRatioF();
  const int side = size + int(std::ceil(width)) + 2;
  QPixmap dot(QSize(side, side) * dpr);
  dot.setDevicePixelRatio(dpr);
  dot.fill(Qt::transparent);
  QPainter p(&dot);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(color, width));
  p.setBrush(palette().color(QPalette::Base));
  p.drawEllipse(QRectF((side - size) / 2.0, (side - size) / 2.0, size, size));
  p.end();
  return QCPScatterStyle(dot);
}

void LivePlots::syncTab(Tab& tab) {
  tab.stale = false;
  if (tab.def.bars) {
    syncBars(tab);
    return;
  }
  if (tab.smoothedWith != smoothing_) resmooth(tab);
  if (tab.keyedBy != xAxis_) rekey(tab);
  tab.loading = false;
  size_t budget = plots_detail::kLoadSlice;
  const QVector<Run*> runs = plottedRuns();
  const int nSeries = int(tab.def.series.size());
  bool any = false;
  int total = 0;
  const int room = legendNameRoom(tab, int(runs.size()));
  for (Run* run : runs) {
    const RunSeries& rs = run->series();
    auto& states = tab.graphs[run];
    states.resize(size_t(nSeries));
    const QString baseName = QFontMetrics(tab.plot->legend->font())
                                 .elidedText(model_->displayName(run), Qt::ElideMiddle, room) +
                             (run == model_->baseline() ? QStringLiteral(" (baseline)") : QString());
    for (int s = 0; s < nSeries; ++s) {
      const SeriesDef& def = tab.def.series[size_t(s)];
      GraphState& g = states[size_t(s)];
      const size_t available = def.fromEvals ? rs.evals().size() : rs.steps().size();
      if (!g.graph) {
        if (available == 0 || (def.applies && !def.applies(rs))) continue;
        g.graph = new FastGraph(tab.plot->xAxis, def.rightAxis ? tab.plot->yAxis2 : tab.plot->yAxis);
        g.graph->setFast(decimation_);
        styleGraph(g.graph, run, def, tab.dense);
        if (s > 0) g.graph->removeFromLegend();  // one legend entry per run: the line style tells the series
      }
      const QString label = def.labelFor ? def.labelFor(rs) : def.label;
      const QString name = nSeries > 1 && s > 0 ? baseName + QStringLiteral(" · ") + label : baseName;
      if (g.graph->name() != name) g.graph->setName(name);
      takePoints(tab, g, def, rs, &budget);
      showLonePoint(g.graph, run, def, tab.dense);
      any = any || !g.graph->data()->isEmpty();
      total += g.graph->data()->size();
    }
  }
  tab.emptyText->setVisible(!any);
  if (!any)
    tab.emptyText->setText(runs.isEmpty() ? QStringLiteral("Tick runs in the list to draw them here.")
                           : !tab.def.emptyWithRuns.isEmpty() ? tab.def.emptyWithRuns
                                                              : QStringLiteral("The runs ticked have no points here yet."));
  // Past a few hundred thousand points, antialiasing and wide pens cost more than they show.
  const bool dense = total > kAntialiasLimit;
  tab.plot->setNotAntialiasedElements(dense ? QCP::aePlottables : QCP::aeNone);
  if (dense != tab.dense) {
    tab.dense = dense;
    for (auto it = tab.graphs.begin(); it != tab.graphs.end(); ++it)
      for (size_t s = 0; s < it.value().size(); ++s)
        if (QCPGraph* graph = it.value()[s].graph) styleGraph(graph, it.key(), tab.def.series[s], dense);
  }
  tab.plot->xAxis->setLabel(xLabel());
  if (!tab.userZoomed) fitAxes(tab);
  if (tab.loading) tab.stale = true;  // the next slice
}

// How wide a run's name may be in the legend, elided in the middle beyond it (the list's tooltip
// has the whole name): two columns fit, and with many runs as many more as keep the legend
// within a quarter of the plot's height, so it never crowds the curves.
int LivePlots::legendNameRoom(const Tab& tab, int entries) const {
  const int width = tab.plot->width();
  QCPLegend* legend = tab.plot->legend;
  const QCPAbstractLegendItem* item = legend->itemCount() > 0 ? legend->item(0) : nullptr;
  const int rowHeight = (item ? item->minimumOuterSizeHint().height() : QFontMetrics(legend->font()).height() + 8) +
                        legend->rowSpacing();
  const int maxRows = std::max(2, tab.plot->height() / 4 / rowHeight);
  const int columns = std::max(2, (entries + maxRows - 1) / maxRows);
  return std::max(70, std::min(width / columns - 50, width / 2 - 60));
}

// Appends what the run's series gained since the last sync (smoothed, for a smoothed series), at
// most *budget points (then the tab is loading: the rest comes in the next slice).
void LivePlots::takePoints(Tab& tab, GraphState& g, const SeriesDef& def, const RunSeries& rs, size_t* budget) {
  const PointReader read(def, rs, xAxis_);
  const size_t total = read.size();
  if (total < g.consumed) restart(g);  // the series started over (a rewritten events file)
  if (total <= g.consumed) return;
  const size_t available = std::min(total, g.consumed + *budget);
  *budget -= available - g.consumed;
  if (available < total) tab.loading = true;
  QVector<QCPGraphData> points;
  // A first load keeps this vector as the graph's data: room for the slices to come, so they
  // append without moving it.
  points.reserve(int((g.graph->data()->isEmpty() ? total : available) - g.consumed));
  const double alpha = def.smooth ? smoothing_ : 0.0;
  if (alpha > 0) g.unsmoothed.reserve(g.unsmoothed.size() + (available - g.consumed));
  double lastX = g.xmax;
  bool sorted = true;
  for (size_t i = g.consumed; i < available; ++i) {
    read.prefetch(i + kReadAhead);
    const double x = read.x(i);
    double y = read.y(i);
    if (!std::isfinite(x) || !std::isfinite(y) || (tab.def.logY && y <= 0)) {
      g.contiguous = false;
      continue;
    }
    if (alpha > 0) {
      g.unsmoothed.push_back(y);
      g.ema = std::isfinite(g.ema) ? alpha * g.ema + (1.0 - alpha) * y : y;
      y = g.ema;
    }
    if (x < lastX) sorted = false;
    lastX = x;
    points.append(QCPGraphData(x, y));
    g.xmin = std::min(g.xmin, x);
    g.xmax = std::max(g.xmax, x);
    g.ymin = std::min(g.ymin, y);
    g.ymax = std::max(g.ymax, y);
  }
  g.consumed = available;
  if (points.isEmpty()) return;
  if (g.graph->data()->isEmpty()) g.graph->data()->set(points, sorted);  // shares the vector: no copy
  else g.graph->data()->add(points, sorted);
  if (!sorted) g.graph->dataReplaced(), g.inOrder = false;  // sorted into the middle: the summary starts over
  if (g.graph->fast()) g.graph->summariseAll();
}

void LivePlots::restart(GraphState& g) {
  g.graph->data()->clear();
  g.graph->dataReplaced();
  g = GraphState{g.graph};
}

// The x axis changed: each graph's keys are rewritten in place from its run's series, its values,
// smoothing and min/max summary standing, instead of taking every point again. A graph that
// cannot be (points left out, or out of key order, under either axis) starts over.
void LivePlots::rekey(Tab& tab) {
  tab.keyedBy = xAxis_;
  for (auto it = tab.graphs.begin(); it != tab.graphs.end(); ++it)
    for (size_t s = 0; s < it.value().size(); ++s) {
      GraphState& g = it.value()[s];
      if (g.graph && !rekeyGraph(g, PointReader(tab.def.series[s], it.key()->series(), xAxis_))) restart(g);
    }
}

// The keys a first load under the new axis would give, or false (the graph must be taken again).
bool LivePlots::rekeyGraph(GraphState& g, const PointReader& read) {
  auto data = g.graph->data();
  const size_t n = size_t(data->size());
  if (!g.inOrder || !g.contiguous || n != g.consumed || n > read.size()) return false;
  if (n == 0) return true;
  QCPGraphData* d = &*data->begin();  // one detach check, not one a point
  double last = -kInf;
  for (size_t i = 0; i < n; ++i) {
    const double x = read.x(i);
    if (!std::isfinite(x) || x < last) return false;  // takePoints would leave it out, or sort
    d[i].key = last = x;
  }
  g.xmin = d[0].key, g.xmax = last;
  g.graph->keysReplaced();
  return true;
}

// A new smoothing weight: the smoothed curves are computed again, in place (no pass over the
// runs' series): from the graph's own values when it was not smoothed (they are kept aside while
// it is), from those kept values otherwise. A curve whose points came out of key order reads its
// series again.
void LivePlots::resmooth(Tab& tab) {
  const bool wasRaw = tab.smoothedWith == 0;
  tab.smoothedWith = smoothing_;
  for (auto& states : tab.graphs)
    for (size_t s = 0; s < states.size(); ++s) {
      GraphState& g = states[s];
      if (!g.graph || !tab.def.series[s].smooth) continue;
      auto data = g.graph->data();
      g.graph->dataReplaced();
      if (wasRaw) {
        g.unsmoothed.clear();
        g.unsmoothed.reserve(size_t(data->size()));
        for (auto it = data->constBegin(); it != data->constEnd(); ++it) g.unsmoothed.push_back(it->value);
      }
      if (!g.inOrder || size_t(data->size()) != g.unsmoothed.size()) {
        restart(g);
        continue;
      }
      g.ema = kNaN;
      g.ymin = kInf;
      g.ymax = -kInf;
      size_t i = 0;
      for (auto it = data->begin(); it != data->end(); ++it, ++i) {
        const double y = g.unsmoothed[i];
        g.ema = std::isfinite(g.ema) && smoothing_ > 0 ? smoothing_ * g.ema + (1.0 - smoothing_) * y : y;
        it->value = g.ema;
        g.ymin = std::min(g.ymin, g.ema);
        g.ymax = std::max(g.ymax, g.ema);
      }
      if (smoothing_ == 0) std::vector<double>().swap(g.unsmoothed);  // the graph holds the values themselves again
    }
}

void LivePlots::fitAxes(Tab& tab) {
  if (tab.def.bars) {
    tab.stale = true;
    syncBars(tab);
    return;
  }
  double xmin = kInf, xmax = -kInf, ymin = kInf, ymax = -kInf, y2max = -kInf;
  for (const auto& states : tab.graphs)
    for (const auto& g : states) {
      if (!g.graph) continue;
      xmin = std::min(xmin, g.xmin);
      xmax = std::max(xmax, g.xmax);
      if (g.graph->valueAxis() == tab.plot->yAxis2) {  // percentages: from 0, their own scale
        y2max = std::max(y2max, g.ymax);
        continue;
      }
      ymin = std::min(ymin, g.ymin);
      ymax = std::max(ymax, g.ymax);
    }
  if (y2max > 0) tab.plot->yAxis2->setRange(0.0, y2max * 1.1);
  if (!(xmin <= xmax) || !(ymin <= ymax)) return;
  if (xmax - xmin <= 0) {  // one point (a single evaluation): from the axis's start to a little past it
    xmin = std::min(0.0, xmin);
    xmax = xmax > 0 ? xmax * 1.05 : xmax + 1.0;
  } else {  // a little air, so end markers are not cut in half
    const double air = (xmax - xmin) * 0.015;
    xmin -= air;
    xmax += air;
  }
  tab.plot->xAxis->setRange(xmin, xmax);
  if (tab.def.logY) {
    tab.plot->yAxis->setRange(ymin / 1.5, ymax * 1.5);
    return;
  }
  if (tab.def.zeroBased) ymin = std::min(0.0, ymin);
  const double pad = (ymax - ymin) > 0 ? (ymax - ymin) * 0.06 : std::max(1e-3, std::abs(ymax) * 0.1);
  tab.plot->yAxis->setRange(tab.def.zeroBased && ymin >= 0 ? 0.0 : ymin - pad, ymax + pad);
}

void LivePlots::onMouseMove(Tab& tab, QMouseEvent* event) {
  if (event->buttons() != Qt::NoButton || tab.def.bars) return;
  QCustomPlot* plot = tab.plot;
  const QPointF pos = event->position();
  const double key = plot->xAxis->pixelToCoord(pos.x());
  double best = 15.0;  // px: close enough to mean "this point"
  QString text;
  for (int i = 0; i < plot->graphCount(); ++i) {
    QCPGraph* g = plot->graph(i);
    if (!g->visible() || g->data()->isEmpty()) continue;
    auto it = g->data()->findBegin(key, false);
    for (auto cand : {it, it == g->data()->constBegin() ? it : it - 1}) {
      if (cand == g->data()->constEnd()) continue;
      const QPointF px = g->coordsToPixels(cand->key, cand->value);
      const double d = std::hypot(px.x() - pos.x(), px.y() - pos.y());
      if (d < best) {
        best = d;
        text = QStringLiteral("%1\n%2 = %3\n%4 = %5")
                   .arg(g->name(), xLabel(), QString::number(cand->key, 'g', 6),
                        g->valueAxis() == plot->yAxis2 ? tab.def.y2Label : tab.def.yLabel,
                        QString::number(cand->value, 'g', 5));
      }
    }
  }
  if (text.isEmpty()) QToolTip::hideText();
  else QToolTip::showText(event->globalPosition().toPoint(), text, plot);
}

}  // namespace wb::ui
