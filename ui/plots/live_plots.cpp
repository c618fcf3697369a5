#include "plots/live_plots.h"

#include <QComboBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMouseEvent>
#include <QPushButton>
#include <QSlider>
#include <QTabWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

#include "plots/qcp.h"
#ifdef WB_HAVE_QTSVG
#include <QSvgGenerator>
#endif

#include "runs/runs_model.h"

namespace wb::ui {

namespace {

void fitLegendColumns(QCustomPlot* plot) {
  QCPLegend* legend = plot->legend;
  if (!legend) return;
  int widest = 0;
  for (int i = 0; i < legend->elementCount(); ++i)  // a re-flowed grid can hold empty cells
    if (QCPLayoutElement* e = legend->elementAt(i)) widest = std::max(widest, e->minimumOuterSizeHint().width());
  if (widest <= 0) return;
  const int available = plot->width() - 24;
  const int columns = std::clamp(available / (widest + legend->columnSpacing()), 1, 6);
  if (columns == legend->wrap()) return;
  legend->setWrap(columns);
  legend->setFillOrder(legend->fillOrder(), true);  // re-flow the existing entries
}
constexpr int kReplotDelayMs = 40;  // at most ~25 replots per second, whatever the event rate
constexpr double kMiB = 1024.0 * 1024.0;
constexpr int kAntialiasLimit = 200000;
constexpr double kInf = std::numeric_limits<double>::infinity();

bool isDark(const QWidget* w) { return w->palette().color(QPalette::Base).lightness() < 128; }

const QVector<QColor>& runColors(bool dark) {
  static const QVector<QColor> light = {QColor(0x1f77b4), QColor(0xd62728), QColor(0x2ca02c), QColor(0xff7f0e),
                                        QColor(0x9467bd), QColor(0x8c564b), QColor(0xe377c2), QColor(0x17becf),
                                        QColor(0xbcbd22), QColor(0x7f7f7f)};
  static const QVector<QColor> darkSet = {QColor(0x5aa9e6), QColor(0xff6b6b), QColor(0x6bd66b), QColor(0xffa64d),
                                          QColor(0xc09ae8), QColor(0xd0a593), QColor(0xf29ad6), QColor(0x4fd8e8),
                                          QColor(0xdada5a), QColor(0xb8b8b8)};
  return dark ? darkSet : light;
}

const QVector<QColor>& partColors() {
  static const QVector<QColor> c = {QColor(0xe45756), QColor(0xf58518), QColor(0x4c78a8), QColor(0x72b7b2),
                                    QColor(0x54a24b), QColor(0xb279a2)};
  return c;
}
}  // namespace

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
};

struct LivePlots::TabDef {
  QString key, title, yLabel;
  std::vector<SeriesDef> series;
  bool logY = false;
  bool zeroBased = false;
  bool bars = false;
};

struct LivePlots::GraphState {
  QCPGraph* graph = nullptr;
  size_t consumed = 0;
  double ema = kNaN;
  double xmin = kInf, xmax = -kInf, ymin = kInf, ymax = -kInf;
};

struct LivePlots::Tab {
  TabDef def;
  QCustomPlot* plot = nullptr;
  QHash<const Run*, std::vector<GraphState>> graphs;
  QVector<QCPBars*> bars;
  QCPItemText* emptyText = nullptr;
  bool stale = true;
  bool userZoomed = false;
};

LivePlots::LivePlots(RunsModel* model, QWidget* parent) : QWidget(parent), model_(model) {
  setObjectName(QStringLiteral("livePlots"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);

  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(6, 4, 6, 0);
  auto* xLabel = new QLabel(QStringLiteral("X axis"), this);
  xAxisBox_ = new QComboBox(this);
  xAxisBox_->setObjectName(QStringLiteral("plots.xaxis"));
  xAxisBox_->addItem(QStringLiteral("step"), int(XAxis::Step));
  xAxisBox_->addItem(QStringLiteral("epoch"), int(XAxis::Epoch));
  xAxisBox_->addItem(QStringLiteral("wall time"), int(XAxis::Wall));
  xAxisBox_->addItem(QStringLiteral("samples seen"), int(XAxis::Samples));
  xLabel->setBuddy(xAxisBox_);
  auto* smoothText = new QLabel(QStringLiteral("Smoothing"), this);
  smoothSlider_ = new QSlider(Qt::Horizontal, this);
  smoothSlider_->setObjectName(QStringLiteral("plots.smoothing"));
  smoothSlider_->setRange(0, 99);
  smoothSlider_->setMaximumWidth(160);
  smoothSlider_->setToolTip(QStringLiteral("Exponential moving average of the step curves (loss, throughput)"));
  smoothText->setBuddy(smoothSlider_);
  smoothLabel_ = new QLabel(QStringLiteral("off"), this);
  smoothLabel_->setMinimumWidth(QFontMetrics(font()).horizontalAdvance(QStringLiteral("0.99 ")));
  auto* reset = new QPushButton(QStringLiteral("Reset zoom"), this);
  reset->setObjectName(QStringLiteral("plots.reset"));
  bar->addWidget(xLabel);
  bar->addWidget(xAxisBox_);
  bar->addSpacing(12);
  bar->addWidget(smoothText);
  bar->addWidget(smoothSlider_);
  bar->addWidget(smoothLabel_);
  bar->addStretch(1);
  bar->addWidget(reset);
  layout->addLayout(bar);

  tabs_ = new QTabWidget(this);
  tabs_->setObjectName(QStringLiteral("plots.tabs"));
  tabs_->setDocumentMode(true);
  layout->addWidget(tabs_, 1);
  buildTabs();

  replotTimer_.setSingleShot(true);
  replotTimer_.setInterval(kReplotDelayMs);
  connect(&replotTimer_, &QTimer::timeout, this, &LivePlots::onReplotTimer);
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    if (Tab* t = currentTab(); t && t->stale) scheduleReplot();
  });
  connect(xAxisBox_, &QComboBox::currentIndexChanged, this,
          [this] { setXAxis(XAxis(xAxisBox_->currentData().toInt())); });
  connect(smoothSlider_, &QSlider::valueChanged, this, [this](int v) { setSmoothing(v / 100.0); });
  connect(reset, &QPushButton::clicked, this, [this] {
    if (Tab* t = currentTab()) {
      t->userZoomed = false;
      fitAxes(*t);
      t->plot->replot(QCustomPlot::rpQueuedReplot);
    }
  });

  connect(model_, &RunsModel::shownChanged, this, &LivePlots::onShownChanged);
  connect(model_, &RunsModel::baselineChanged, this, &LivePlots::onBaselineChanged);
  connect(model_, &RunsModel::runAboutToBeRemoved, this, &LivePlots::dropRun);
  for (Run* r : plottedRuns()) connect(r, &Run::dataAppended, this, &LivePlots::onRunData, Qt::UniqueConnection);
}

LivePlots::~LivePlots() = default;

void LivePlots::buildTabs() {
  auto stepSeries = [](QString label, auto fn, bool smooth) {
    SeriesDef s;
    s.label = std::move(label);
    s.stepY = fn;
    s.smooth = smooth;
    return s;
  };
  auto evalSeries = [](QString label, auto fn) {
    SeriesDef s;
    s.label = std::move(label);
    s.fromEvals = true;
    s.evalY = fn;
    s.markers = true;
    return s;
  };
  std::vector<TabDef> defs;
  {
    TabDef t{QStringLiteral("loss"), QStringLiteral("Loss"), QStringLiteral("loss"), {}};
    t.series.push_back(stepSeries(QStringLiteral("train"), [](const StepPoint& p, const RunSeries&) { return p.loss; }, true));
    t.series.push_back(evalSeries(QStringLiteral("val"), [](const EvalPoint& p) { return p.valLoss; }));
    t.series.back().dashed = true;
    defs.push_back(std::move(t));
  }
  {
    TabDef t{QStringLiteral("accuracy"), QStringLiteral("Accuracy"), QStringLiteral("val accuracy (%)"), {}};
    t.series.push_back(evalSeries(QStringLiteral("val"), [](const EvalPoint& p) { return p.valAcc * 100.0; }));
    defs.push_back(std::move(t));
  }
  {
    TabDef t{QStringLiteral("throughput"), QStringLiteral("Throughput"), QStringLiteral("train samples / s"), {}};
    t.series.push_back(stepSeries(QStringLiteral("train samples/s"), [](const StepPoint& p, const RunSeries&) { return p.samplesPerS; }, true));
    t.zeroBased = true;
    defs.push_back(std::move(t));
  }
  {
    TabDef t{QStringLiteral("memory"), QStringLiteral("Memory"), QStringLiteral("MiB (device alloc / reserved, or host RSS)"), {}};
    SeriesDef a = stepSeries(QStringLiteral("memory"), [](const StepPoint& p, const RunSeries& rs) {
      return (rs.onCuda() ? p.alloc : p.rss) / kMiB;
    }, false);
    a.label = QStringLiteral("alloc / RSS");
    a.labelFor = [](const RunSeries& rs) { return rs.onCuda() ? QStringLiteral("device alloc") : QStringLiteral("host RSS"); };
    t.series.push_back(a);
    SeriesDef r = stepSeries(QStringLiteral("reserved"), [](const StepPoint& p, const RunSeries&) { return p.reserved / kMiB; }, false);
    r.applies = [](const RunSeries& rs) { return rs.onCuda(); };
    r.dashed = true;
    t.series.push_back(r);
    t.zeroBased = true;
    defs.push_back(std::move(t));
  }
  {
    TabDef t{QStringLiteral("steptime"), QStringLiteral("Step time"), QStringLiteral("ms per step (mean)"), {}};
    t.bars = true;
    t.zeroBased = true;
    defs.push_back(std::move(t));
  }
  {
    TabDef t{QStringLiteral("lossscale"), QStringLiteral("Loss scale"), QStringLiteral("fp16 loss scale"), {}};
    SeriesDef s = stepSeries(QStringLiteral("scale"), [](const StepPoint& p, const RunSeries&) { return p.ampScale; }, false);
    s.applies = [](const RunSeries& rs) { return rs.hasAmpScale(); };
    t.series.push_back(s);
    t.logY = true;
    defs.push_back(std::move(t));
  }

  for (auto& def : defs) {
    auto tab = std::make_unique<Tab>();
    tab->def = std::move(def);
    auto* plot = new QCustomPlot(tabs_);
    plot->setObjectName(QStringLiteral("plot.") + tab->def.key);
    tab->plot = plot;
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->setNoAntialiasingOnDrag(true);
    plot->setPlottingHint(QCP::phFastPolylines, true);
    plot->yAxis->setLabel(tab->def.yLabel);
    plot->xAxis->setLabel(tab->def.bars ? QString() : xLabel());
    if (tab->def.logY) {
      plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
      plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    }
    // Legend under the plot, in columns: it never covers the curves, however many runs.
    auto* legendRow = new QCPLayoutGrid;
    plot->plotLayout()->addElement(1, 0, legendRow);
    legendRow->setMargins(QMargins(4, 0, 4, 4));
    // Spacers either side: a legend's maximum width would otherwise cap the whole column.
    legendRow->addElement(0, 0, new QCPLayoutElement(plot));
    legendRow->addElement(0, 1, plot->legend);
    legendRow->addElement(0, 2, new QCPLayoutElement(plot));
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot->legend->setWrap(4);
    plot->legend->setVisible(true);
    // As many columns as the widest entry allows at this width, so long run names wrap to more
    // rows instead of running off the edge (checked before every replot, resizes included).
    connect(plot, &QCustomPlot::beforeReplot, plot, [plot] { fitLegendColumns(plot); });
    plot->plotLayout()->setRowStretchFactor(1, 0.001);
    tab->emptyText = new QCPItemText(plot);
    tab->emptyText->position->setType(QCPItemPosition::ptAxisRectRatio);
    tab->emptyText->position->setCoords(0.5, 0.5);
    tab->emptyText->setText(QStringLiteral("Tick runs in the list to draw them here."));
    applyPalette(plot);

    Tab* t = tab.get();
    connect(plot, &QCustomPlot::legendClick, this, [plot](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
      auto* pli = qobject_cast<QCPPlottableLegendItem*>(item);
      if (!pli) return;
      QCPAbstractPlottable* p = pli->plottable();
      p->setVisible(!p->visible());
      QColor c = plot->legend->textColor();
      if (!p->visible()) c.setAlpha(90);
      pli->setTextColor(c);
      plot->replot(QCustomPlot::rpQueuedReplot);
    });
    connect(plot, &QCustomPlot::mouseWheel, this, [t] { t->userZoomed = true; });
    connect(plot, &QCustomPlot::mousePress, this, [t](QMouseEvent* e) {
      if (e->button() == Qt::LeftButton) t->userZoomed = true;
    });
    connect(plot, &QCustomPlot::mouseDoubleClick, this, [this, t] {
      t->userZoomed = false;
      fitAxes(*t);
      t->plot->replot(QCustomPlot::rpQueuedReplot);
    });
    connect(plot, &QCustomPlot::mouseMove, this, [this, t](QMouseEvent* e) { onMouseMove(*t, e); });
    plot->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(plot, &QWidget::customContextMenuRequested, this, [this, t](const QPoint& pos) { showContextMenu(*t, pos); });
    tabs_->addTab(plot, tab->def.title);
    tabsState_.push_back(std::move(tab));
  }
}

QStringList LivePlots::tabKeys() const {
  QStringList keys;
  for (const auto& t : tabsState_) keys << t->def.key;
  return keys;
}

QCustomPlot* LivePlots::plot(const QString& key) const {
  for (const auto& t : tabsState_)
    if (t->def.key == key) return t->plot;
  return nullptr;
}

void LivePlots::showTab(const QString& key) {
  if (QCustomPlot* p = plot(key)) tabs_->setCurrentWidget(p);
}

int LivePlots::pointCount(const QString& key) const {
  int n = 0;
  for (const auto& t : tabsState_) {
    if (t->def.key != key) continue;
    for (int i = 0; i < t->plot->graphCount(); ++i) n += t->plot->graph(i)->data()->size();
    for (QCPBars* b : t->bars) n += b->data()->size();
  }
  return n;
}

LivePlots::Tab* LivePlots::currentTab() {
  const int i = tabs_->currentIndex();
  return (i >= 0 && i < int(tabsState_.size())) ? tabsState_[size_t(i)].get() : nullptr;
}

QVector<Run*> LivePlots::plottedRuns() const {
  QVector<Run*> runs = model_->shownRuns();
  if (Run* b = model_->baseline(); b && !runs.contains(b)) runs.prepend(b);
  return runs;
}

QColor LivePlots::colorFor(const Run* run) {
  if (run == model_->baseline()) return palette().color(QPalette::Text);  // the reference: ink colour
  auto it = colorIndex_.find(run);
  if (it == colorIndex_.end()) it = colorIndex_.insert(run, nextColor_++);
  const auto& colors = runColors(isDark(this));
  return colors[it.value() % colors.size()];
}

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

void LivePlots::onRunData() { scheduleReplot(); }

void LivePlots::scheduleReplot() {
  for (auto& t : tabsState_) t->stale = true;
  if (!replotTimer_.isActive()) replotTimer_.start();
}

void LivePlots::onReplotTimer() {
  if (!isVisible()) return;  // caught up in showEvent
  flush(false);
}

void LivePlots::flush(bool immediate) {
  Tab* t = currentTab();
  if (!t) return;
  if (t->stale) syncTab(*t);
  t->plot->replot(immediate ? QCustomPlot::rpImmediateRefresh : QCustomPlot::rpQueuedReplot);
  ++replots_;
  Q_EMIT replotted();
}

void LivePlots::syncAll() {
  for (auto& t : tabsState_)
    if (t->stale) syncTab(*t);
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
    const QString baseName = run == model_->baseline() ? run->name() + QStringLiteral(" (baseline)") : run->name();
    for (int s = 0; s < nSeries; ++s) {
      const SeriesDef& def = tab.def.series[size_t(s)];
      GraphState& g = states[size_t(s)];
      const size_t available = def.fromEvals ? rs.evals().size() : rs.steps().size();
      if (!g.graph) {
        if (available == 0 || (def.applies && !def.applies(rs))) continue;
        g.graph = tab.plot->addGraph();
        styleGraph(g.graph, run, def);
      }
      if (available < g.consumed) {  // the series started over (a rewritten events file)
        g.graph->data()->clear();
        g = GraphState{g.graph};
      }
      const QString label = def.labelFor ? def.labelFor(rs) : def.label;
      const QString name = nSeries > 1 ? baseName + QStringLiteral(" · ") + label : baseName;
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
  // Past a few hundred thousand points, antialiasing the curves costs more than it shows.
  int total = 0;
  for (int i = 0; i < tab.plot->graphCount(); ++i) total += tab.plot->graph(i)->data()->size();
  tab.plot->setNotAntialiasedElements(total > kAntialiasLimit ? QCP::aePlottables : QCP::aeNone);
  tab.plot->xAxis->setLabel(xLabel());
  if (!tab.userZoomed) fitAxes(tab);
}

void LivePlots::syncBars(Tab& tab) {
  QCustomPlot* plot = tab.plot;
  if (tab.bars.isEmpty()) {
    QCPBars* below = nullptr;
    for (size_t i = 0; i < kStepParts.size(); ++i) {
      auto* b = new QCPBars(plot->xAxis, plot->yAxis);
      b->setName(QString::fromLatin1(kStepParts[i]));
      b->setWidth(0.6);
      b->setStackingGap(0);
      const QColor c = partColors()[int(i)];
      b->setPen(QPen(c.darker(130)));
      b->setBrush(c);
      if (below) b->moveAbove(below);
      below = b;
      tab.bars.append(b);
    }
  }
  const QVector<Run*> runs = plottedRuns();
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  QVector<QVector<double>> values(int(kStepParts.size()));
  QVector<double> keys;
  double top = 0;
  for (int r = 0; r < runs.size(); ++r) {
    const Run* run = runs[r];
    QString name = run->name();
    if (name.size() > 18) name = name.left(17) + QStringLiteral("…");
    if (run == model_->baseline()) name += QStringLiteral("\n(baseline)");
    ticker->addTick(r + 1, name);
    keys << r + 1;
    double sum = 0;
    for (size_t i = 0; i < kStepParts.size(); ++i) {
      double v = run->series().meanMs(int(i));
      if (!std::isfinite(v)) v = 0;
      values[int(i)] << v;
      sum += v;
    }
    top = std::max(top, sum);
  }
  for (int i = 0; i < tab.bars.size(); ++i) tab.bars[i]->setData(keys, values[i], true);
  plot->xAxis->setTicker(ticker);
  plot->xAxis->setLabel(QString());
  tab.emptyText->setVisible(runs.isEmpty() || top <= 0);
  if (!tab.userZoomed) {
    plot->xAxis->setRange(0.3, std::max(1, int(runs.size())) + 0.7);
    plot->yAxis->setRange(0, top > 0 ? top * 1.1 : 1.0);
  }
}

void LivePlots::fitAxes(Tab& tab) {
  if (tab.def.bars) {
    tab.stale = true;
    syncBars(tab);
    return;
  }
  double xmin = kInf, xmax = -kInf, ymin = kInf, ymax = -kInf;
  for (const auto& states : tab.graphs)
    for (const auto& g : states) {
      if (!g.graph) continue;
      xmin = std::min(xmin, g.xmin);
      xmax = std::max(xmax, g.xmax);
      ymin = std::min(ymin, g.ymin);
      ymax = std::max(ymax, g.ymax);
    }
  if (!(xmin <= xmax) || !(ymin <= ymax)) return;
  if (xmax - xmin <= 0) {
    xmin -= 0.5;
    xmax += 0.5;
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

void LivePlots::dropRun(Run* run) {
  disconnect(run, &Run::dataAppended, this, &LivePlots::onRunData);
  for (auto& t : tabsState_) {
    auto it = t->graphs.find(run);
    if (it == t->graphs.end()) continue;
    for (auto& g : it.value())
      if (g.graph) t->plot->removeGraph(g.graph);
    t->graphs.erase(it);
  }
  colorIndex_.remove(run);
  scheduleReplot();
}

void LivePlots::onShownChanged(Run* run, bool shown) {
  if (shown) {
    connect(run, &Run::dataAppended, this, &LivePlots::onRunData, Qt::UniqueConnection);
    scheduleReplot();
  } else if (run != model_->baseline()) {
    dropRun(run);
  }
}

void LivePlots::onBaselineChanged() {
  // The baseline is drawn differently: restyle by re-adding every plotted run's curves.
  rebuildAll();
}

void LivePlots::rebuildAll() {
  for (auto& t : tabsState_) {
    for (auto& states : t->graphs)
      for (auto& g : states)
        if (g.graph) t->plot->removeGraph(g.graph);
    t->graphs.clear();
  }
  for (Run* r : plottedRuns()) connect(r, &Run::dataAppended, this, &LivePlots::onRunData, Qt::UniqueConnection);
  scheduleReplot();
}

void LivePlots::setXAxis(XAxis axis) {
  if (axis == xAxis_) return;
  xAxis_ = axis;
  {
    const QSignalBlocker block(xAxisBox_);
    xAxisBox_->setCurrentIndex(xAxisBox_->findData(int(axis)));
  }
  for (auto& t : tabsState_) t->userZoomed = false;
  rebuildAll();
}

void LivePlots::setSmoothing(double alpha) {
  alpha = std::clamp(alpha, 0.0, 0.99);
  if (alpha == smoothing_) return;
  smoothing_ = alpha;
  {
    const QSignalBlocker block(smoothSlider_);
    smoothSlider_->setValue(int(alpha * 100 + 0.5));
  }
  smoothLabel_->setText(alpha > 0 ? QString::number(alpha, 'f', 2) : QStringLiteral("off"));
  rebuildAll();
}

void LivePlots::applyPalette(QCustomPlot* plot) {
  const QPalette pal = palette();
  const QColor base = pal.color(QPalette::Base), text = pal.color(QPalette::Text);
  plot->setBackground(base);
  plot->axisRect()->setBackground(base);
  inkAxes({plot->xAxis, plot->yAxis, plot->xAxis2, plot->yAxis2}, text);
  QColor legendBg = base;
  legendBg.setAlpha(230);
  plot->legend->setBrush(legendBg);
  plot->legend->setBorderPen(Qt::NoPen);
  plot->legend->setTextColor(text);
  QFont f = font();
  f.setPointSizeF(f.pointSizeF() * 0.9);
  plot->legend->setFont(f);
  for (int i = 0; i < plot->legend->itemCount(); ++i) plot->legend->item(i)->setTextColor(text);
  if (auto* empty = plot->findChild<QCPItemText*>()) empty->setColor(text);
  for (int i = 0; i < plot->itemCount(); ++i)
    if (auto* t = qobject_cast<QCPItemText*>(plot->item(i))) t->setColor(pal.color(QPalette::PlaceholderText));
}

void LivePlots::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() != QEvent::PaletteChange) return;
  for (auto& t : tabsState_) applyPalette(t->plot);
  rebuildAll();  // run colours depend on the palette
}

void LivePlots::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (Tab* t = currentTab(); t && t->stale) scheduleReplot();
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
                   .arg(g->name(), xLabel(), QString::number(cand->key, 'g', 6), tab.def.yLabel,
                        QString::number(cand->value, 'g', 5));
      }
    }
  }
  if (text.isEmpty()) QToolTip::hideText();
  else QToolTip::showText(event->globalPosition().toPoint(), text, plot);
}

bool LivePlots::saveCurrentPlot(const QString& path, QString* error) {
  Tab* t = currentTab();
  if (!t) return false;
  QCustomPlot* plot = t->plot;
  const QString ext = QFileInfo(path).suffix().toLower();
  bool ok = false;
  if (ext == QLatin1String("png")) {
    ok = plot->savePng(path, 0, 0, 2.0);
  } else if (ext == QLatin1String("pdf")) {
    ok = plot->savePdf(path);
  } else if (ext == QLatin1String("svg")) {
#ifdef WB_HAVE_QTSVG
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setSize(plot->size());
    gen.setViewBox(QRect(QPoint(0, 0), plot->size()));
    gen.setTitle(t->def.title);
    QCPPainter painter;
    if (painter.begin(&gen)) {
      plot->toPainter(&painter, plot->width(), plot->height());
      ok = painter.end();
    }
#else
    if (error) *error = QStringLiteral("SVG export needs Qt SVG, which this build lacks.");
    return false;
#endif
  } else {
    if (error) *error = QStringLiteral("Unknown image format \"%1\": use .png, .svg or .pdf.").arg(ext);
    return false;
  }
  if (!ok && error) *error = QStringLiteral("Could not write %1 (is the folder writable?).").arg(path);
  return ok;
}

void LivePlots::showContextMenu(Tab& tab, const QPoint& pos) {
  QMenu menu(this);
  auto save = [this, &tab](const QString& ext, const QString& filter) {
    tabs_->setCurrentWidget(tab.plot);
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Save plot"), tab.def.key + QLatin1Char('.') + ext, filter);
    if (path.isEmpty()) return;
    QString err;
    if (!saveCurrentPlot(path, &err)) QToolTip::showText(QCursor::pos(), err, this);
  };
  menu.addAction(QStringLiteral("Save as PNG…"), this, [save] { save(QStringLiteral("png"), QStringLiteral("PNG image (*.png)")); });
#ifdef WB_HAVE_QTSVG
  menu.addAction(QStringLiteral("Save as SVG…"), this, [save] { save(QStringLiteral("svg"), QStringLiteral("SVG image (*.svg)")); });
#endif
  menu.addAction(QStringLiteral("Save as PDF…"), this, [save] { save(QStringLiteral("pdf"), QStringLiteral("PDF document (*.pdf)")); });
  menu.addSeparator();
  menu.addAction(QStringLiteral("Reset zoom"), this, [this, &tab] {
    tab.userZoomed = false;
    fitAxes(tab);
    tab.plot->replot(QCustomPlot::rpQueuedReplot);
  });
  menu.exec(tab.plot->mapToGlobal(pos));
}

}  // namespace wb::ui
