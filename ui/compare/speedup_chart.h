#pragma once
// A bar chart of speedups (the ladder's cumulative speedup to the target accuracy, or each run's
// speedup to the target) drawn with QCustomPlot from a wb::render::BarChartSpec — the same data
// the SVG/PNG exports draw, so the window and the files agree. Bars with no valid speedup
// (skipped, not reached, contended) are drawn as empty outlines at the 1× line with their reason
// and the accuracy reached; only valid speedups are drawn bold. A label too long for its bar's
// share of the width is elided; hovering the bar shows it whole with its figures (barTip).
//
// Saves as PNG, PDF (QCustomPlot) or SVG (wb::render::toSvg of the same spec), atomically: a
// failed write leaves no file under the final name.
//
// Thread affinity: GUI thread.
#include <QWidget>

#include "wb/render/chart.h"

class QCustomPlot;
class QMouseEvent;
class QCPItemText;
class QCPAxisRect;

namespace wb::ui {

class SpeedupChart : public QWidget {
  Q_OBJECT
 public:
  explicit SpeedupChart(QWidget* parent = nullptr);

  void setBars(const wb::render::BarChartSpec& spec);
  const wb::render::BarChartSpec& bars() const { return spec_; }
  bool isEmpty() const { return spec_.bars.empty(); }
  QCustomPlot* plot() const { return plot_; }

  // What hovering bar `index` (0-based) shows: its whole label, figure and detail.
  QString barTip(int index) const;

  // By extension: .png, .pdf or .svg. False with a message naming the path when it fails.
  bool save(const QString& path, QString* error) const;

 protected:
  void changeEvent(QEvent* event) override;  // a new palette (View → Theme) redraws in its colours
  void resizeEvent(QResizeEvent* event) override;

 private:
  int barRoom(int bars) const;  // px of width each bar's label and annotation may take
  QString fittedAnnotation(const wb::render::Bar& bar, QFont font, int room, QCPItemText* item) const;
  QCPAxisRect* titledRect(const QString& title);
  void annotate(const wb::render::Bar& b, QCPAxisRect* rect, double key, double at, int room);
  void showBarTip(QMouseEvent* event);

  QCustomPlot* plot_;
  wb::render::BarChartSpec spec_;
};

}  // namespace wb::ui
