// The tab kinds (what each tab draws) and their plots: set-up, palette, saving, context menu.
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMouseEvent>
#include <QTabWidget>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "plots/live_plots_tab.h"
#ifdef WB_HAVE_QTSVG
#include <QSvgGenerator>
#endif

namespace wb::ui {

namespace plots_detail {

void fitLegendColumns(QCustomPlot* plot) {
  QCPLegend* legend = plot->legend;
  if (!legend) return;
  int widest = 0;
  for (int i = 0; i < legend->elementCount(); ++i)  // a re-flowed grid can hold empty cells
    if (QCPLayoutElement* e = legend->elementAt(i)) widest = std::max(widest, e->minimumOuterSizeHint().width());
  if (widest <= 0) return;
  const int available = plot->width() - 24;
  const int columns = std::clamp(available / (widest + legend->columnSpacing()), 1, 8);
  if (columns == legend->wrap()) return;
  legend->setWrap(columns);
  legend->setFillOrder(legend->fillOrder(), true);  // re-flow the existing entries
}

void fitAxisLabel(QCPAxis* axis, const QString& label, const QString& shortLabel) {
  if (label.isEmpty()) return;
  const int room = axis->axisRect()->height() - 8;
  const bool fits = shortLabel.isEmpty() || QFontMetrics(axis->labelFont()).horizontalAdvance(label) <= room;
  const QString want = fits ? label : shortLabel;
  if (axis->label() != want) axis->setLabel(want);
}

bool isDark(const QWidget* w) { return w->palette().color(QPalette::Base).lightness() < 128; }

const QVector<QColor>& runColors(bool dark) {
  // Ten hues, then the same ten in a second shade (lighter on white, deeper on dark): 20 runs
  // ticked at once never share a colour.
  static const QVector<QColor> light = {QColor(0x1f77b4), QColor(0xd62728), QColor(0x2ca02c), QColor(0xff7f0e),
                                        QColor(0x9467bd), QColor(0x8c564b), QColor(0xe377c2), QColor(0x17becf),
                                        QColor(0xbcbd22), QColor(0x7f7f7f), QColor(0x7fb5e0), QColor(0xf08a8a),
                                        QColor(0x84cf7f), QColor(0xffb56b), QColor(0xbba3d6), QColor(0xc09a8f),
                                        QColor(0xf2a7dd), QColor(0x6fd3de), QColor(0xd6d66b), QColor(0xb5b5b5)};
  static const QVector<QColor> darkSet = {QColor(0x5aa9e6), QColor(0xff6b6b), QColor(0x6bd66b), QColor(0xffa64d),
                                          QColor(0xc09ae8), QColor(0xd0a593), QColor(0xf29ad6), QColor(0x4fd8e8),
                                          QColor(0xdada5a), QColor(0xb8b8b8), QColor(0x2f7bbf), QColor(0xc94545),
                                          QColor(0x3f9f3f), QColor(0xc7782a), QColor(0x8e6bc0), QColor(0x9c7563),
                                          QColor(0xc06aa6), QColor(0x2aa5b5), QColor(0xa8a830), QColor(0x8a8a8a)};
  return dark ? darkSet : light;
}

const QVector<QColor>& partColors() {
  static const QVector<QColor> c = {QColor(0xe45756), QColor(0xf58518), QColor(0x4c78a8), QColor(0x72b7b2),
                                    QColor(0x54a24b), QColor(0xb279a2)};
  return c;
}

}  // namespace plots_detail

using plots_detail::kMiB;

namespace {

// A series of the steps' values (`fn` of a step), smoothed or not.
template <class Series, class F>
Series stepSeriesOf(QString label, F fn, bool smooth) {
  Series s;
  s.label = std::move(label);
  s.stepY = fn;
  s.smooth = smooth;
  return s;
}

// A series of the evaluations' values, each evaluation a marker.
template <class Series, class F>
Series evalSeriesOf(QString label, F fn) {
  Series s;
  s.label = std::move(label);
  s.fromEvals = true;
  s.evalY = fn;
  s.markers = true;
  return s;
}

}  // namespace

std::vector<LivePlots::TabDef> LivePlots::tabDefs() {
  auto stepSeries = [](QString label, auto fn, bool smooth) { return stepSeriesOf<SeriesDef>(std::move(label), fn, smooth); };
  auto evalSeries = [](QString label, auto fn) { return evalSeriesOf<SeriesDef>(std::move(label), fn); };
  std::vector<TabDef> defs;
  {
    TabDef t{QStringLiteral("loss"), QStringLiteral("Loss"), QStringLiteral("loss (solid: train, dashed: val)"), QStringLiteral("loss"), {}};
    t.series.push_back(stepSeries(QStringLiteral("train"), [](const StepPoint& p, const RunSeries&) { return p.loss; }, true));
    t.series.push_back(evalSeries(QStringLiteral("val"), [](const EvalPoint& p) { return p.valLoss; }));
    t.series.back().dashed = true;
    defs.push_back(std::move(t));
  }
  {
    TabDef t{QStringLiteral("accuracy"), QStringLiteral("Accuracy"), QStringLiteral("val accuracy (%)"), QStringLiteral("val acc (%)"), {}};
    t.series.push_back(evalSeries(QStringLiteral("val"), [](const EvalPoint& p) { return p.valAcc * 100.0; }));
    defs.push_back(std::move(t));
  }
  {
    TabDef t{QStringLiteral("throughput"), QStringLiteral("Throughput"), QStringLiteral("train samples / s"), QStringLiteral("samples/s"), {}};
    t.series.push_back(stepSeries(QStringLiteral("train samples/s"), [](const StepPoint& p, const RunSeries&) { return p.samplesPerS; }, true));
    // How far from the limit: achieved GFLOP/s as % of the measured peak (and, on a GPU, of
    // the datasheet's), on the right axis; runs without these figures draw none.
    auto pctSeries = [&](QString label, double StepPoint::*field, bool markers) {
      SeriesDef s = stepSeries(std::move(label), [field](const StepPoint& p, const RunSeries&) { return p.*field; }, true);
      s.rightAxis = true;
      s.dashed = true;
      s.markers = markers;
      s.applies = [field](const RunSeries& rs) { return !rs.steps().empty() && std::isfinite(rs.steps().back().*field); };
      return s;
    };
    t.series.push_back(pctSeries(QStringLiteral("% of measured peak"), &StepPoint::pctOfPeak, false));
    t.series.push_back(pctSeries(QStringLiteral("% of datasheet peak"), &StepPoint::pctOfDatasheet, true));
    t.y2Label = QStringLiteral("% of peak FLOP/s (1 multiply-add = 2 FLOPs)");
    t.y2Short = QStringLiteral("% of peak FLOP/s");
    t.zeroBased = true;
    defs.push_back(std::move(t));
  }
  {
    TabDef t{QStringLiteral("memory"), QStringLiteral("Memory"),
             QStringLiteral("MiB (host RSS, or device alloc solid / reserved dashed)"), QStringLiteral("MiB"), {}};
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
    TabDef t{QStringLiteral("steptime"), QStringLiteral("Step time"), QStringLiteral("ms per step (mean)"), QStringLiteral("ms/step"), {}};
    t.bars = true;
    t.zeroBased = true;
    defs.push_back(std::move(t));
  }
  {
    TabDef t{QStringLiteral("lossscale"), QStringLiteral("Loss scale"), QStringLiteral("fp16 loss scale"), QStringLiteral("loss scale"), {}};
    SeriesDef s = stepSeries(QStringLiteral("scale"), [](const StepPoint& p, const RunSeries&) { return p.ampScale; }, false);
    s.applies = [](const RunSeries& rs) { return rs.hasAmpScale(); };
    t.series.push_back(s);
    t.logY = true;
    t.emptyWithRuns = QStringLiteral("Only fp16 runs (precision 16-mixed, on a GPU) have a loss scale; the runs ticked "
                                     "train in fp32 or bf16, which need none.");
    defs.push_back(std::move(t));
  }
  return defs;
}

void LivePlots::buildTabs() {
  for (auto& def : tabDefs()) {
    auto tab = std::make_unique<Tab>();
    tab->def = std::move(def);
    setUpPlot(*tab);
    tabs_->addTab(tab->plot, tab->def.title);
    tabsState_.push_back(std::move(tab));
  }
}

namespace plots_detail {
namespace {
// Legend under the plot, in columns: it never covers the curves, however many runs.
void addLegendBelow(QCustomPlot* plot) {
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
  QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot] { fitLegendColumns(plot); });
  plot->plotLayout()->setRowStretchFactor(1, 0.001);
}
}  // namespace
}  // namespace plots_detail

// The tab's plot: axes, the legend under it, the empty-state text, and its mouse handling.
void LivePlots::setUpPlot(Tab& tab) {
  auto* plot = new QCustomPlot(tabs_);
  plot->setObjectName(QStringLiteral("plot.") + tab.def.key);
  tab.plot = plot;
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->setNoAntialiasingOnDrag(true);
  plot->setPlottingHint(QCP::phFastPolylines, true);
  plot->yAxis->setLabel(tab.def.yLabel);
  if (!tab.def.y2Label.isEmpty()) {
    plot->yAxis2->setVisible(true);
    plot->yAxis2->setLabel(tab.def.y2Label);
  }
  plot->xAxis->setLabel(tab.def.bars ? QString() : xLabel());
  if (tab.def.logY) {
    plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  }
  plots_detail::addLegendBelow(plot);
  // A short plot, short axis labels.
  connect(plot, &QCustomPlot::beforeReplot, this, [t = &tab] {
    plots_detail::fitAxisLabel(t->plot->yAxis, t->def.yLabel, t->def.yShort);
    if (t->plot->yAxis2->visible()) plots_detail::fitAxisLabel(t->plot->yAxis2, t->def.y2Label, t->def.y2Short);
  });
  tab.emptyText = new QCPItemText(plot);
  tab.emptyText->position->setType(QCPItemPosition::ptAxisRectRatio);
  tab.emptyText->position->setCoords(0.5, 0.5);
  tab.emptyText->setText(QStringLiteral("Tick runs in the list to draw them here."));
  applyPalette(plot);
  connectMouse(tab);
}

// Legend clicks hide a curve; a drag or the wheel zooms (until a double-click fits again).
void LivePlots::connectMouse(Tab& tab) {
  Tab* t = &tab;
  QCustomPlot* plot = tab.plot;
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
  // A legend re-flowed into columns holds empty cells: item(i) is null there.
  for (int i = 0; i < plot->legend->itemCount(); ++i)
    if (QCPAbstractLegendItem* item = plot->legend->item(i)) item->setTextColor(text);
  if (auto* empty = plot->findChild<QCPItemText*>()) empty->setColor(text);
  for (int i = 0; i < plot->itemCount(); ++i)
    if (auto* t = qobject_cast<QCPItemText*>(plot->item(i))) t->setColor(pal.color(QPalette::PlaceholderText));
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
