#pragma once
// Include QCustomPlot through this header. qcustomplot.h spells Qt's keyword macros (signals,
// slots, emit, foreach), which QT_NO_KEYWORDS turns off for our code (LibTorch uses `slots`):
// they are defined around this one include only.
#ifndef signals
#define WB_QCP_SIGNALS
#define signals Q_SIGNALS
#endif
#ifndef slots
#define WB_QCP_SLOTS
#define slots Q_SLOTS
#endif
#ifndef emit
#define WB_QCP_EMIT
#define emit Q_EMIT
#endif
#ifndef foreach
#define WB_QCP_FOREACH
#define foreach Q_FOREACH
#endif

#include <qcustomplot.h>

#ifdef WB_QCP_SIGNALS
#undef signals
#undef WB_QCP_SIGNALS
#endif
#ifdef WB_QCP_SLOTS
#undef slots
#undef WB_QCP_SLOTS
#endif
#ifdef WB_QCP_EMIT
#undef emit
#undef WB_QCP_EMIT
#endif
#ifdef WB_QCP_FOREACH
#undef foreach
#undef WB_QCP_FOREACH
#endif

#include <initializer_list>

namespace wb::ui {

// Axes drawn in a palette's text colour `ink`, with dotted grid lines of it (sub-grid fainter):
// the live plots and the speedup chart follow the light or dark theme alike.
inline void inkAxes(std::initializer_list<QCPAxis*> axes, const QColor& ink) {
  QColor grid = ink, subGrid = ink;
  grid.setAlpha(40);
  subGrid.setAlpha(18);
  for (QCPAxis* axis : axes) {
    axis->setBasePen(QPen(ink));
    axis->setTickPen(QPen(ink));
    axis->setSubTickPen(QPen(ink));
    axis->setTickLabelColor(ink);
    axis->setLabelColor(ink);
    axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    axis->grid()->setSubGridPen(QPen(subGrid, 1, Qt::DotLine));
  }
}

}  // namespace wb::ui
