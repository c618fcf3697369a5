#include "plots/fast_graph.h"

#include <QPaintEngine>

#include <algorithm>
#include <limits>

namespace wb::ui {

namespace {
// Points per summary block: small enough that the one block a column ends in is four cache lines
// to scan, large enough that the summary stays a tenth of the data.
constexpr int kBlock = 16;
// A column ends inside a block of the data that nothing has read yet: a miss to memory, most of
// what sampling costs. Columns are about as wide as the last one, so the block a column that
// many ahead ends in is fetched while this one is handled.
constexpr int kPrefetchColumns = 2;

void prefetchBlock(const QCPGraphData* d, int index, int end) {
#if defined(__GNUC__)
  if (index >= end) return;
  const QCPGraphData* block = d + index / kBlock * kBlock;
  for (int k = 0; k < kBlock; k += 4) __builtin_prefetch(block + k);  // 4 points a 64-byte line
#else
  (void)d, (void)index, (void)end;
#endif
}
}  // namespace

FastGraph::FastGraph(QCPAxis* keyAxis, QCPAxis* valueAxis) : QCPGraph(keyAxis, valueAxis) {}

void FastGraph::getOptimizedLineData(QVector<QCPGraphData>* lineData, const Iter& begin, const Iter& end) const {
  const int before = lineData ? int(lineData->size()) : 0;
  QCPAxis* keyAxis = mKeyAxis.data();
  const bool linear = keyAxis && keyAxis->scaleType() == QCPAxis::stLinear;
  int maxCount = std::numeric_limits<int>::max();
  if (linear && mAdaptiveSampling && begin != end) {  // QCPGraph's rule: sample at two points a pixel or more
    const double keyPixelSpan = qAbs(keyAxis->coordToPixel(begin->key) - keyAxis->coordToPixel((end - 1)->key));
    if (2 * keyPixelSpan + 2 < double(std::numeric_limits<int>::max())) maxCount = int(2 * keyPixelSpan + 2);
  }
  lastSampledHere_ = fast_ && lineData && linear && mAdaptiveSampling && begin != end && int(end - begin) >= maxCount;
  if (lastSampledHere_)
    sampleClusters(lineData, begin, end);
  else
    QCPGraph::getOptimizedLineData(lineData, begin, end);
  lastLinePoints_ = lineData ? int(lineData->size()) - before : 0;
}

// QCPGraph::getOptimizedLineData's clusters, one pixel column at a time: the same keys, values
// and order, without visiting the points inside a column.
void FastGraph::sampleClusters(QVector<QCPGraphData>* lineData, Iter begin, Iter end) const {
  catchUpSummary();
  QCPAxis* keyAxis = mKeyAxis.data();
  const QCPGraphData* d = points();
  const int first = int(begin - mDataContainer->constBegin()), last = int(end - mDataContainer->constBegin());
  const int reversedFactor = keyAxis->pixelOrientation();
  const int reversedRound = reversedFactor == -1 ? 1 : 0;
  auto columnStart = [&](double key) { return keyAxis->pixelToCoord(int(keyAxis->coordToPixel(key) + reversedRound)); };
  double start = columnStart(d[first].key);
  double lastIntervalEnd = start;
  const double eps = qAbs(start - keyAxis->pixelToCoord(keyAxis->coordToPixel(start) + 1.0 * reversedFactor));
  for (int i = first;;) {
    const int next = clusterEnd(i + 1, last, start + eps);
    if (next - i >= 2) {
      double lo, hi;
      extremes(i, next, &lo, &hi);
      if (lastIntervalEnd < start - eps) lineData->append(QCPGraphData(start + eps * 0.2, d[i].value));
      lineData->append(QCPGraphData(start + eps * 0.25, lo));
      lineData->append(QCPGraphData(start + eps * 0.75, hi));
      if (next != last && d[next].key > start + eps * 2) lineData->append(QCPGraphData(start + eps * 0.8, d[next - 1].value));
    } else {
      lineData->append(d[i]);
    }
    if (next == last) return;
    prefetchBlock(d, next + kPrefetchColumns * (next - i), last);
    lastIntervalEnd = d[next - 1].key;
    i = next;
    start = columnStart(d[i].key);
  }
}

// The answer lies in the first block whose last key reaches the bound: galloped to over the
// summary (a column spans a few blocks or thousands), then found inside that block.
int FastGraph::clusterEnd(int from, int end, double bound) const {
  const QCPGraphData* d = points();
  if (from >= end || d[from].key >= bound) return std::min(from, end);  // a column of one point
  size_t b = size_t(from) / kBlock;
  if (b < summaryBlocks_ && blocks_[b].lastKey < bound) {
    size_t lo = b + 1, hi = lo, step = 1;
    while (hi < summaryBlocks_ && blocks_[hi].lastKey < bound) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    hi = std::min(hi, summaryBlocks_);
    b = size_t(std::partition_point(blocks_.begin() + ptrdiff_t(lo), blocks_.begin() + ptrdiff_t(hi),
                                    [bound](const Block& k) { return k.lastKey < bound; }) -
               blocks_.begin());
    from = std::max(from, int(b) * kBlock);
  }
  int i = std::min(from, end);  // past the summary: the incomplete last block
  while (i < end && d[i].key < bound) ++i;
  return i;
}

void FastGraph::extremes(int from, int to, double* lo, double* hi) const {
  const QCPGraphData* d = points();
  double mn = std::numeric_limits<double>::infinity(), mx = -mn;
  int i = from;
  for (; i < to && i % kBlock != 0; ++i) mn = std::min(mn, d[i].value), mx = std::max(mx, d[i].value);
  for (; i + kBlock <= to; i += kBlock) mn = std::min(mn, blocks_[size_t(i / kBlock)].lo), mx = std::max(mx, blocks_[size_t(i / kBlock)].hi);
  for (; i < to; ++i) mn = std::min(mn, d[i].value), mx = std::max(mx, d[i].value);
  *lo = mn;
  *hi = mx;
}

namespace {
// One block's last key and extremes: a fixed-length loop over one contiguous run, which the
// compiler unrolls (a summary of millions of points is one pass at memory speed).
template <class Block>
Block summarise(const QCPGraphData* p) {
  double lo = p[0].value, hi = lo;
  for (int k = 1; k < kBlock; ++k) lo = std::min(lo, p[k].value), hi = std::max(hi, p[k].value);
  return {p[kBlock - 1].key, lo, hi};
}
}  // namespace

// The summary covers every complete block of the data (appended points extend it; rewritten keys
// leave the extremes standing).
void FastGraph::catchUpSummary() const {
  const size_t complete = size_t(mDataContainer->size() / kBlock);
  if (summaryBlocks_ > complete) summaryBlocks_ = 0;
  const QCPGraphData* d = points();
  if (keysStale_)
    for (size_t b = 0; b < summaryBlocks_; ++b) blocks_[b].lastKey = d[(b + 1) * kBlock - 1].key;
  keysStale_ = false;
  blocks_.resize(complete);
  for (size_t b = summaryBlocks_; b < complete; ++b) blocks_[b] = summarise<Block>(d + b * kBlock);
  summaryBlocks_ = complete;
}

// QCPAbstractPlottable1D::drawPolyline, for the pens it draws one segment a call: a 1-px pen
// made cosmetic, solid, with phFastPolylines, on screen. Each call sets Qt's line stroker up
// again; one drawLines call strokes every segment on its own all the same, so the pixels match.
bool FastGraph::drawsCosmeticSegments(QCPPainter* painter) const {
  const QPen& pen = painter->pen();
  const bool onePixel = pen.widthF() == 0 || qFuzzyCompare(pen.widthF(), 1.0);
  return fast_ && onePixel && pen.style() == Qt::SolidLine && mParentPlot->plottingHints().testFlag(QCP::phFastPolylines) &&
         !painter->modes().testFlag(QCPPainter::pmVectorized) && !painter->modes().testFlag(QCPPainter::pmNoCaching) &&
         painter->paintEngine() && painter->paintEngine()->type() == QPaintEngine::Raster;
}

namespace {
// drawPolyline's segments: consecutive points, a NaN breaking the line (its very rule).
template <class Line, class ToLine>
std::vector<Line> segments(const QVector<QPointF>& pts, ToLine toLine) {
  std::vector<Line> out;
  out.reserve(size_t(pts.size()));
  auto isNan = [&](int i) { return qIsNaN(pts[i].y()) || qIsNaN(pts[i].x()); };
  int i = 0;
  while (i < pts.size() && isNan(i)) ++i;
  bool lastIsNan = false;
  for (++i; i < pts.size(); ++i) {
    if (isNan(i)) {
      lastIsNan = true;
    } else if (lastIsNan) {
      lastIsNan = false;
    } else {
      out.push_back(toLine(QLineF(pts[i - 1], pts[i])));
    }
  }
  return out;
}
}  // namespace

void FastGraph::drawLinePlot(QCPPainter* painter, const QVector<QPointF>& lines) const {
  if (!drawsCosmeticSegments(painter)) {
    QCPGraph::drawLinePlot(painter, lines);
    return;
  }
  if (painter->pen().color().alpha() == 0) return;
  applyDefaultAntialiasingHint(painter);
  QPen cosmetic = painter->pen();
  cosmetic.setWidth(0);
  painter->setPen(cosmetic);
  // QCPPainter::drawLine rounds a segment to whole pixels unless it antialiases.
  if (painter->antialiasing()) {
    const auto s = segments<QLineF>(lines, [](const QLineF& l) { return l; });
    painter->drawLines(s.data(), int(s.size()));
  } else {
    const auto s = segments<QLine>(lines, [](const QLineF& l) { return l.toLine(); });
    painter->drawLines(s.data(), int(s.size()));
  }
}

}  // namespace wb::ui
