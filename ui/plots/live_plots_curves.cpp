// Line tabs (loss, accuracy, throughput, memory, loss scale): each graph takes only the points
// its run appended since the last sync, with optional EMA smoothing; axes fit unless zoomed.
#include <QMouseEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "plots/live_plots_tab.h"
#include "runs/runs_model.h"

namespace wb::ui {

using plots_detail::kAntialiasLimit;
using plots_detail::kInf;

double LivePlots::xOf(const StepPoint& p) const {
  switch (xAxis_) {
    case XAxis::Step: return p.step;
    case XAxis::Epoch: return p.epoch;
    case XAxis::Wall: return p.t;
    case XAxis::Samples: return p.samples;
  }
  return p.step;
}

double LivePlots::xOf(const EvalPoint& p) const {
  switch (xAxis_) {
    case XAxis::Step: return p.step;
    case XAxis::Epoch: return p.epoch;
    case XAxis::Wall: return p.t;
    case XAxis::Samples: return p.samples;
  }
  return p.step;
}

QString LivePlots::xLabel() const {
  switch (xAxis_) {
    case XAxis::Step: return QStringLiteral("step");
    case XAxis::Epoch: return QStringLiteral("epoch");
    case XAxis::Wall: return QStringLiteral("wall time (s)");
    case XAxis::Samples: return QStringLiteral("samples seen");
  }
  return {};
}

void LivePlots::styleGraph(QCPGraph* graph, const Run* run, const SeriesDef& def) {
  const bool base = run == model_->baseline();
  QPen pen(colorFor(run));
  pen.setWidthF(base ? 2.6 : 1.5);
  if (def.dashed) pen.setStyle(Qt::DashLine);
  graph->setPen(pen);
  // Markers keep a solid outline even on a dashed curve.
  QPen markerPen(pen.color(), pen.widthF());
  graph->setScatterStyle(def.markers ? QCPScatterStyle(QCPScatterStyle::ssCircle, markerPen, QBrush(palette().color(QPalette::Base)),
                                                       base ? 7 : 6)
                                     : QCPScatterStyle());
  graph->setAdaptiveSampling(true);
}

void LivePlots::syncTab(Tab& tab) {
  tab.stale = false;
  if (tab.def.bars) {
    syncBars(tab);
    return;
  }
  const QVector<Run*> runs = plottedRuns();
  const int nSeries = int(tab.def.series.size());
  bool any = false;
  for (Run* run : runs) {
    const RunSeries& rs = run->series();
    auto& states = tab.graphs[run];
    states.resize(size_t(nSeries));
    // Elided in the middle so that two legend columns fit: a long name never stacks the legend
    // into one column that squeezes the plot (the list's tooltip has the whole name).
    const int room = std::max(110, tab.plot->width() / 2 - 60);
    const QString baseName = QFontMetrics(tab.plot->legend->font())
                                 .elidedText(model_->displayName(run), Qt::ElideMiddle, room) +
                             (run == model_->baseline() ? QStringLiteral(" (baseline)") : QString());
    for (int s = 0; s < nSeries; ++s) {
      const SeriesDef& def = tab.def.series[size_t(s)];
      GraphState& g = states[size_t(s)];
      const size_t available = def.fromEvals ? rs.evals().size() : rs.steps().size();
      if (!g.graph) {
        if (available == 0 || (def.applies && !def.applies(rs))) continue;
        g.graph = def.rightAxis ? tab.plot->addGraph(tab.plot->xAxis, tab.plot->yAxis2) : tab.plot->addGraph();
        styleGraph(g.graph, run, def);
        if (s > 0) g.graph->removeFromLegend();  // one legend entry per run: the line style tells the series
      }
      if (available < g.consumed) {  // the series started over (a rewritten events file)
        g.graph->data()->clear();
        g = GraphState{g.graph};
      }
      const QString label = def.labelFor ? def.labelFor(rs) : def.label;
      const QString name = nSeries > 1 && s > 0 ? baseName + QStringLiteral(" · ") + label : baseName;
      if (g.graph->name() != name) g.graph->setName(name);
      if (available <= g.consumed) {
        any = any || g.graph->data()->size() > 0;
        continue;
      }
      QVector<QCPGraphData> points;
      points.reserve(int(available - g.consumed));
      const double alpha = def.smooth ? smoothing_ : 0.0;
      double lastX = g.xmax;
      bool sorted = true;
      for (size_t i = g.consumed; i < available; ++i) {
        double x, y;
        if (def.fromEvals) {
          x = xOf(rs.evals()[i]);
          y = def.evalY(rs.evals()[i]);
        } else {
          x = xOf(rs.steps()[i]);
          y = def.stepY(rs.steps()[i], rs);
        }
        if (!std::isfinite(x) || !std::isfinite(y)) continue;
        if (tab.def.logY && y <= 0) continue;
        if (alpha > 0) {
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
      if (!points.isEmpty()) g.graph->data()->add(points, sorted);
      any = any || g.graph->data()->size() > 0;
    }
  }
  tab.emptyText->setVisible(!any);
  if (!any)
    tab.emptyText->setText(runs.isEmpty() ? QStringLiteral("Tick runs in the list to draw them here.")
                           : !tab.def.emptyWithRuns.isEmpty() ? tab.def.emptyWithRuns
                                                              : QStringLiteral("The runs ticked have no points here yet."));
  // Past a few hundred thousand points, antialiasing the curves costs more than it shows.
  int total = 0;
  for (int i = 0; i < tab.plot->graphCount(); ++i) total += tab.plot->graph(i)->data()->size();
  tab.plot->setNotAntialiasedElements(total > kAntialiasLimit ? QCP::aePlottables : QCP::aeNone);
  tab.plot->xAxis->setLabel(xLabel());
  if (!tab.userZoomed) fitAxes(tab);
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
