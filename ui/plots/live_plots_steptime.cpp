// The step-time tab: per run, the mean ms of each step part (data, h2d, fwd, bwd, opt, comm)
// stacked into one bar; the means are core/compare's (Run::meanStepTimes), as in the comparison.
#include <algorithm>
#include <array>
#include <cmath>

#include "plots/live_plots_tab.h"
#include "runs/runs_model.h"

namespace wb::ui {

void LivePlots::syncBars(Tab& tab) {
  QCustomPlot* plot = tab.plot;
  if (tab.bars.isEmpty()) {
    QCPBars* below = nullptr;
    for (size_t i = 0; i < kStepParts.size(); ++i) {
      auto* b = new QCPBars(plot->xAxis, plot->yAxis);
      b->setName(QString::fromLatin1(kStepParts[i]));
      b->setWidth(0.6);
      b->setStackingGap(0);
      const QColor c = plots_detail::partColors()[int(i)];
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
    // Elided in the middle to the bar's share of the width: the start and the end tell runs apart.
    const int room = std::max(60, (plot->width() - 80) / std::max(1, int(runs.size())) - 8);
    QString name = QFontMetrics(plot->xAxis->tickLabelFont()).elidedText(model_->displayName(run), Qt::ElideMiddle, room);
    if (run == model_->baseline()) name += QStringLiteral("\n(baseline)");
    ticker->addTick(r + 1, name);
    keys << r + 1;
    const auto mean = run->meanStepTimes();  // core/compare's rule: after the warm-up interval
    const std::array<double, 6> parts =
        mean ? std::array<double, 6>{mean->data, mean->h2d, mean->fwd, mean->bwd, mean->opt, mean->comm}
             : std::array<double, 6>{};
    double sum = 0;
    for (size_t i = 0; i < kStepParts.size(); ++i) {
      const double v = std::isfinite(parts[i]) ? parts[i] : 0.0;
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

}  // namespace wb::ui
