#include "plots/live_plots.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QResizeEvent>
#include <QSet>
#include <QSlider>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "plots/live_plots_tab.h"
#include "runs/runs_model.h"

namespace wb::ui {

namespace {
constexpr int kReplotDelayMs = 40;  // at most ~25 replots per second, whatever the event rate
}  // namespace

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

int LivePlots::drawnPointCount(const QString& key) const {
  int n = 0;
  for (const auto& t : tabsState_)
    if (t->def.key == key)
      for (const auto& states : t->graphs)
        for (const auto& g : states) n += g.graph && g.graph->visible() ? g.graph->lastLinePoints() : 0;
  return n;
}

void LivePlots::setDecimation(bool on) {
  if (on == decimation_) return;
  decimation_ = on;
  for (auto& t : tabsState_)
    for (auto& states : t->graphs)
      for (auto& g : states)
        if (g.graph) g.graph->setFast(on);
  if (Tab* t = currentTab()) t->plot->replot(QCustomPlot::rpQueuedReplot);
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
  const auto& colors = plots_detail::runColors(plots_detail::isDark(this));
  auto it = colorIndex_.find(run);
  if (it == colorIndex_.end()) {  // the first colour no run drawn now has (an unticked run frees its own)
    QSet<int> taken;
    for (const Run* r : plottedRuns())
      if (auto c = colorIndex_.constFind(r); c != colorIndex_.constEnd()) taken.insert(c.value() % int(colors.size()));
    int pick = 0;
    while (taken.contains(pick) && pick < int(colors.size())) ++pick;
    it = colorIndex_.insert(run, pick < int(colors.size()) ? pick : nextColor_);
    ++nextColor_;
  }
  return colors[it.value() % colors.size()];
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
  if (t->loading) {  // a large load: the next slice after the events waiting, drawn once whole
    QTimer::singleShot(0, this, [this] { flush(false); });
    return;
  }
  t->plot->replot(immediate ? QCustomPlot::rpImmediateRefresh : QCustomPlot::rpQueuedReplot);
  ++replots_;
  Q_EMIT replotted();
}

void LivePlots::syncAll() {
  for (auto& t : tabsState_)
    while (t->stale) syncTab(*t);
}

bool LivePlots::loading() const {
  const int i = tabs_->currentIndex();
  return i >= 0 && i < int(tabsState_.size()) && tabsState_[size_t(i)]->loading;
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
  scheduleReplot();  // each tab rewrites its keys when it is next drawn
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
  scheduleReplot();  // each tab smooths again from the values it keeps when it is next drawn
}

void LivePlots::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() != QEvent::PaletteChange) return;
  for (auto& t : tabsState_) applyPalette(t->plot);
  rebuildAll();  // run colours depend on the palette
}

void LivePlots::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (event->oldSize().width() != event->size().width()) scheduleReplot();
}

void LivePlots::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (Tab* t = currentTab(); t && t->stale) scheduleReplot();
}

}  // namespace wb::ui
