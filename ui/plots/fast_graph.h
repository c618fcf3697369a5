#pragma once
// A QCPGraph that draws long curves fast and exactly as QCustomPlot would. QCustomPlot's
// adaptive sampling reduces a line to what each pixel column of the key axis can show (its first,
// lowest, highest and last point) by visiting every point on every draw: 2 million points cost
// tens of milliseconds a frame. This graph produces the same line data, point for point, by
// finding each column's points with a binary search and their extremes from a min/max summary
// of every 32 points: O(columns · log n) a draw. Appending at the end extends the summary; any
// other change to the data must be followed by dataReplaced(). setFast(false) draws with
// QCustomPlot's own loop (the tests compare the two images pixel for pixel).
//
// Thread affinity: GUI thread.
#include <vector>

#include "plots/qcp.h"

namespace wb::ui {

class FastGraph : public QCPGraph {
 public:
  FastGraph(QCPAxis* keyAxis, QCPAxis* valueAxis);

  void setFast(bool on) { fast_ = on; }
  bool fast() const { return fast_; }
  // The data changed other than by appending at its end (cleared, values rewritten).
  void dataReplaced() { summaryBlocks_ = 0; }
  // Points the last draw handed to the painter (after sampling), and whether it sampled them
  // here (false: QCustomPlot's loop, or no sampling: fewer than two points a pixel).
  int lastLinePoints() const { return lastLinePoints_; }
  bool lastDrawSampledHere() const { return lastSampledHere_; }

 protected:
  void getOptimizedLineData(QVector<QCPGraphData>* lineData, const QCPGraphDataContainer::const_iterator& begin,
                            const QCPGraphDataContainer::const_iterator& end) const override;

 private:
  using Iter = QCPGraphDataContainer::const_iterator;
  void sampleClusters(QVector<QCPGraphData>* lineData, Iter begin, Iter end) const;
  // The first point at or after `it` whose key is not below `bound` (the points are sorted).
  static Iter clusterEnd(Iter it, Iter end, double bound);
  // The lowest and highest value of the points with indices [from, to).
  void extremes(int from, int to, double* lo, double* hi) const;
  void catchUpSummary() const;

  bool fast_ = true;
  mutable std::vector<double> blockMin_, blockMax_;
  mutable size_t summaryBlocks_ = 0;  // complete blocks summarised
  mutable int lastLinePoints_ = 0;
  mutable bool lastSampledHere_ = false;
};

}  // namespace wb::ui
