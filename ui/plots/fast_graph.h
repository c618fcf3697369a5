#pragma once
// A QCPGraph that draws long curves fast and exactly as QCustomPlot would. QCustomPlot's
// adaptive sampling reduces a line to what each pixel column of the key axis can show (its first,
// lowest, highest and last point) by visiting every point on every draw: 2 million points cost
// tens of milliseconds a frame. This graph produces the same line data, point for point, from a
// summary of every 16 points (their last key, lowest and highest value): a column's end is found
// among the blocks and then inside one block, its extremes from the blocks it spans, so a draw
// costs O(columns · log n) and reads little of the data itself. It also hands QCustomPlot's
// one-pixel solid segments to the painter in one call (the same pixels, one stroker set-up).
//
// Appending at the end extends the summary; after rewriting the keys in place (same order, still
// sorted) call keysReplaced(); after any other change to the data, dataReplaced().
// setFast(false) draws with QCustomPlot's own code throughout (the tests compare the two images
// pixel for pixel).
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
  // The data changed other than by appending at its end (cleared, values rewritten, re-sorted).
  void dataReplaced() { summaryBlocks_ = 0; }
  // Only the keys were rewritten, in place: same points, same order, still sorted.
  void keysReplaced() { keysStale_ = true; }
  // Extends the summary to the data's end now, not at the next draw: a load taken in slices
  // calls it per slice, so the first draw of millions of points has nothing left to read.
  void summariseAll() const { catchUpSummary(); }
  // Points the last draw handed to the painter (after sampling), and whether it sampled them
  // here (false: QCustomPlot's loop, or no sampling: fewer than two points a pixel).
  int lastLinePoints() const { return lastLinePoints_; }
  bool lastDrawSampledHere() const { return lastSampledHere_; }

 protected:
  void getOptimizedLineData(QVector<QCPGraphData>* lineData, const QCPGraphDataContainer::const_iterator& begin,
                            const QCPGraphDataContainer::const_iterator& end) const override;
  void drawLinePlot(QCPPainter* painter, const QVector<QPointF>& lines) const override;

 private:
  using Iter = QCPGraphDataContainer::const_iterator;
  struct Block {
    double lastKey, lo, hi;
  };
  void sampleClusters(QVector<QCPGraphData>* lineData, Iter begin, Iter end) const;
  // The first index in [from, end) whose key is not below `bound`, else end (keys are sorted).
  int clusterEnd(int from, int end, double bound) const;
  // The lowest and highest value of the points with indices [from, to).
  void extremes(int from, int to, double* lo, double* hi) const;
  void catchUpSummary() const;
  const QCPGraphData* points() const { return mDataContainer->constBegin().operator->(); }
  // Whether QCustomPlot would draw these lines one 1-px solid segment at a time on a raster
  // painter (its phFastPolylines loop), which drawSegments reproduces in one call.
  bool drawsCosmeticSegments(QCPPainter* painter) const;

  bool fast_ = true;
  mutable std::vector<Block> blocks_;
  mutable size_t summaryBlocks_ = 0;  // complete blocks summarised
  mutable bool keysStale_ = false;    // the summarised blocks' last keys need reading again
  mutable int lastLinePoints_ = 0;
  mutable bool lastSampledHere_ = false;
};

}  // namespace wb::ui
