#pragma once
// Live plots of the shown runs (RunsModel::shownRuns()) and the baseline, one tab each: loss
// (train, val), accuracy, throughput, memory (device alloc/reserved on CUDA, host RSS on CPU),
// step-time split (stacked data/h2d/fwd/bwd/opt/comm per run) and loss scale (fp16).
//
// Smooth under load (PlotJuggler / Wireshark I/O graph style): a Run appends under the GUI
// thread and emits dataAppended(); that only arms one single-shot ~40 ms timer; when it fires,
// the visible tab takes the new points (incrementally: only what was appended) and replots once
// with rpQueuedReplot. Hidden tabs are marked stale and caught up when shown.
//
// X axis: step, epoch, wall time or samples seen; EMA smoothing for the noisy step series;
// click a legend entry to hide its curve; drag/wheel to pan/zoom, double-click or Reset to
// fit; hover shows values; right-click saves the plot as PNG, SVG or PDF.
//
// Thread affinity: GUI thread. The model outlives the widget.
#include <QHash>
#include <QPointer>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include <functional>
#include <vector>

#include "runs/run.h"

class QComboBox;
class QCustomPlot;
class QCPGraph;
class QCPScatterStyle;
class QCPBars;
class QCPItemText;
class QLabel;
class QSlider;
class QTabWidget;

namespace wb::ui {

class RunsModel;

class LivePlots : public QWidget {
  Q_OBJECT
 public:
  using XAxis = XKey;

  explicit LivePlots(RunsModel* model, QWidget* parent = nullptr);
  ~LivePlots() override;

  void setXAxis(XAxis axis);
  XAxis xAxis() const { return xAxis_; }
  // EMA weight of the past, 0 (off) .. 0.99.
  void setSmoothing(double alpha);
  double smoothing() const { return smoothing_; }

  // Tab keys: loss, accuracy, throughput, memory, steptime, lossscale.
  QStringList tabKeys() const;
  QCustomPlot* plot(const QString& key) const;
  void showTab(const QString& key);
  // Data points currently in the tab's graphs (tests use it to see that curves grew).
  int pointCount(const QString& key) const;
  // Replots performed so far (tests, benchmark).
  int replotCount() const { return replots_; }
  // Long curves sample their pixel columns without visiting every point (FastGraph: the same
  // line QCustomPlot draws; on by default); off samples with QCustomPlot's own loop.
  void setDecimation(bool on);
  // Points the tab's graphs handed to the painter in their last draw (pointCount counts the
  // points they hold).
  int drawnPointCount(const QString& key) const;

  // Takes pending data into the visible tab and replots now (benchmarks and tests).
  // immediate: rpImmediateRefresh (the time to draw is spent inside the call).
  void flush(bool immediate = false);
  // Takes pending data into every tab (does not replot hidden ones).
  void syncAll();
  // The visible tab is still taking a large load in slices (it draws once the load is whole).
  bool loading() const;

  // Saves the visible plot; the format follows the extension (.png, .svg, .pdf).
  bool saveCurrentPlot(const QString& path, QString* error = nullptr);

 Q_SIGNALS:
  void replotted();

 protected:
  void showEvent(QShowEvent* event) override;
  void changeEvent(QEvent* event) override;
  // The legend's names are elided to the plot's width (legendNameRoom): a new width elides them again.
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct SeriesDef;
  struct TabDef;
  struct GraphState;
  struct Tab;

  static std::vector<TabDef> tabDefs();
  void buildTabs();
  void setUpPlot(Tab& tab);
  void connectMouse(Tab& tab);
  void onRunData();
  void onShownChanged(Run* run, bool shown);
  void onBaselineChanged();
  void scheduleReplot();
  void onReplotTimer();
  void syncTab(Tab& tab);
  struct PointReader;
  void takePoints(Tab& tab, GraphState& g, const SeriesDef& def, const RunSeries& rs, size_t* budget);
  void rekey(Tab& tab);
  static bool rekeyGraph(GraphState& g, const PointReader& read);
  // Empties the graph: its points are taken again from the start of its series.
  static void restart(GraphState& g);
  int legendNameRoom(const Tab& tab, int entries) const;
  void resmooth(Tab& tab);
  void syncBars(Tab& tab);
  void rebuildAll();
  void dropRun(Run* run);
  QVector<Run*> plottedRuns() const;
  QColor colorFor(const Run* run);
  void styleGraph(QCPGraph* graph, const Run* run, const SeriesDef& def, bool dense);
  void showLonePoint(QCPGraph* graph, const Run* run, const SeriesDef& def, bool dense);
  QCPScatterStyle markerStyle(const QColor& color, int size, double width);
  void applyPalette(QCustomPlot* plot);
  void fitAxes(Tab& tab);
  void onMouseMove(Tab& tab, QMouseEvent* event);
  void showContextMenu(Tab& tab, const QPoint& pos);
  QString xLabel() const;
  Tab* currentTab();

  RunsModel* model_;
  QTabWidget* tabs_;
  QComboBox* xAxisBox_;
  QSlider* smoothSlider_;
  QLabel* smoothLabel_;
  std::vector<std::unique_ptr<Tab>> tabsState_;
  QTimer replotTimer_;
  XAxis xAxis_ = XAxis::Step;
  double smoothing_ = 0.0;
  bool decimation_ = true;
  QHash<const Run*, int> colorIndex_;
  int nextColor_ = 0;
  int replots_ = 0;
};

}  // namespace wb::ui
