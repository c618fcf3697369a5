#include "plots/fast_graph.h"

#include <algorithm>
#include <limits>

namespace wb::ui {

namespace {
constexpr int kBlock = 32;
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
  const Iter first = mDataContainer->constBegin();
  const int reversedFactor = keyAxis->pixelOrientation();
  const int reversedRound = reversedFactor == -1 ? 1 : 0;
  auto columnStart = [&](double key) { return keyAxis->pixelToCoord(int(keyAxis->coordToPixel(key) + reversedRound)); };
  double start = columnStart(begin->key);
  double lastIntervalEnd = start;
  const double eps = qAbs(start - keyAxis->pixelToCoord(keyAxis->coordToPixel(start) + 1.0 * reversedFactor));
  for (Iter it = begin;;) {
    const Iter next = clusterEnd(it + 1, end, start + eps);
    if (next - it >= 2) {
      double lo, hi;
      extremes(int(it - first), int(next - first), &lo, &hi);
      if (lastIntervalEnd < start - eps) lineData->append(QCPGraphData(start + eps * 0.2, it->value));
      lineData->append(QCPGraphData(start + eps * 0.25, lo));
      lineData->append(QCPGraphData(start + eps * 0.75, hi));
      if (next != end && next->key > start + eps * 2) lineData->append(QCPGraphData(start + eps * 0.8, (next - 1)->value));
    } else {
      lineData->append(*it);
    }
    if (next == end) return;
    lastIntervalEnd = (next - 1)->key;
    it = next;
    start = columnStart(it->key);
  }
}

FastGraph::Iter FastGraph::clusterEnd(Iter it, Iter end, double bound) {
  Iter lo = it, hi = it;
  ptrdiff_t step = 1;
  while (hi != end && hi->key < bound) {  // gallop: a column holds few points or many
    lo = hi + 1;
    hi = end - hi > step ? hi + step : end;
    step *= 2;
  }
  return std::lower_bound(lo, hi, bound, [](const QCPGraphData& d, double b) { return d.key < b; });
}

void FastGraph::extremes(int from, int to, double* lo, double* hi) const {
  const Iter d = mDataContainer->constBegin();
  double mn = std::numeric_limits<double>::infinity(), mx = -mn;
  int i = from;
  for (; i < to && i % kBlock != 0; ++i) mn = std::min(mn, d[i].value), mx = std::max(mx, d[i].value);
  for (; i + kBlock <= to; i += kBlock) mn = std::min(mn, blockMin_[size_t(i / kBlock)]), mx = std::max(mx, blockMax_[size_t(i / kBlock)]);
  for (; i < to; ++i) mn = std::min(mn, d[i].value), mx = std::max(mx, d[i].value);
  *lo = mn;
  *hi = mx;
}

// The summary covers every complete block of the data (appended points extend it).
void FastGraph::catchUpSummary() const {
  const size_t blocks = size_t(mDataContainer->size() / kBlock);
  if (summaryBlocks_ > blocks) summaryBlocks_ = 0;
  blockMin_.resize(blocks);
  blockMax_.resize(blocks);
  const Iter d = mDataContainer->constBegin();
  for (size_t b = summaryBlocks_; b < blocks; ++b) {
    double mn = d[int(b) * kBlock].value, mx = mn;
    for (int k = 1; k < kBlock; ++k) mn = std::min(mn, d[int(b) * kBlock + k].value), mx = std::max(mx, d[int(b) * kBlock + k].value);
    blockMin_[b] = mn;
    blockMax_[b] = mx;
  }
  summaryBlocks_ = blocks;
}

}  // namespace wb::ui
