#include "compare/speedup_chart.h"

#include <QBuffer>
#include <QEvent>
#include <QFile>
#include <QFileInfo>
#include <QFontMetrics>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "plots/qcp.h"
#include "wb/common/fs.h"

namespace wb::ui {

namespace {

// `text` broken at spaces into lines no wider than `width` (a long title wraps, never clips).
QString wrapped(const QString& text, const QFontMetrics& fm, int width) {
  QStringList lines;
  QString line;
  for (const QString& word : text.split(QLatin1Char(' '))) {
    const QString longer = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
    if (!line.isEmpty() && fm.horizontalAdvance(longer) > width) {
      lines << line;
      line = word;
    } else {
      line = longer;
    }
  }
  if (!line.isEmpty()) lines << line;
  return lines.join(QLatin1Char('\n'));
}

// A bar's label in at most two lines of `width` px: broken at spaces, the rest elided in the
// middle (names end in what tells them apart).
QString twoLines(const QString& label, const QFontMetrics& fm, int width) {
  QStringList lines = wrapped(label, fm, width).split(QLatin1Char('\n'));
  if (lines.size() > 2) lines = QStringList{lines.front(), lines.mid(1).join(QLatin1Char(' '))};
  for (QString& line : lines) line = fm.elidedText(line, Qt::ElideMiddle, width);
  return lines.join(QLatin1Char('\n'));
}

}  // namespace

// The chart's own width: the plot fills it (no margins), and a hidden chart's layout has not yet
// passed a resize on to the plot.
int SpeedupChart::barRoom(int bars) const {
  return std::max(36, (width() - 70) / std::max(1, bars) - 10);
}

// The annotation (and its detail line) in `font`, made to fit `room` px: a smaller font first,
// then the annotation alone, elided as a last resort.
QString SpeedupChart::fittedAnnotation(const wb::render::Bar& bar, QFont font, int room, QCPItemText* item) const {
  const QString annotation = QString::fromStdString(bar.annotation), detail = QString::fromStdString(bar.detail);
  const auto widest = [&](const QFont& f, bool withDetail) {
    const QFontMetrics fm(f);
    return std::max(fm.horizontalAdvance(annotation), withDetail ? fm.horizontalAdvance(detail) : 0);
  };
  for (bool withDetail : {true, false}) {
    if (!withDetail && detail.isEmpty()) break;
    QFont f = font;
    for (double size = font.pointSizeF(); size >= 7.0; size -= 1.0) {
      f.setPointSizeF(size);
      if (widest(f, withDetail && !detail.isEmpty()) <= room) {
        item->setFont(f);
        return withDetail && !detail.isEmpty() ? annotation + QLatin1Char('\n') + detail : annotation;
      }
    }
  }
  font.setPointSizeF(7.0);
  item->setFont(font);
  return QFontMetrics(font).elidedText(annotation, Qt::ElideRight, room);
}

SpeedupChart::SpeedupChart(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  plot_->setObjectName(QStringLiteral("speedupChart"));
  plot_->setMinimumHeight(200);
  plot_->setMinimumWidth(220);
  connect(plot_, &QCustomPlot::mouseMove, this, &SpeedupChart::showBarTip);
  setBars({});
}

QString SpeedupChart::barTip(int index) const {
  if (index < 0 || index >= int(spec_.bars.size())) return {};
  const auto& b = spec_.bars[size_t(index)];
  QString tip = QString::fromStdString(b.label) + QLatin1Char('\n') + QString::fromStdString(b.annotation);
  if (!b.detail.empty()) tip += QLatin1Char('\n') + QString::fromStdString(b.detail);
  return tip;
}

void SpeedupChart::showBarTip(QMouseEvent* event) {
  QCPAxisRect* rect = plot_->axisRectCount() > 0 ? plot_->axisRect() : nullptr;
  if (!rect || !rect->rect().contains(event->position().toPoint())) {
    QToolTip::hideText();
    return;
  }
  const double key = rect->axis(QCPAxis::atBottom)->pixelToCoord(event->position().x());
  const int index = int(std::lround(key)) - 1;  // bar i sits at key i + 1
  const QString tip = std::abs(key - (index + 1)) <= 0.4 ? barTip(index) : QString();
  if (tip.isEmpty()) QToolTip::hideText();
  else QToolTip::showText(event->globalPosition().toPoint(), tip, plot_);
}

namespace {

// The reference line (1×, the baseline) across the whole axis rect.
void referenceLine(QCustomPlot* plot, QCPAxisRect* rect, QCPAxis* x, QCPAxis* y, double reference) {
  auto* line = new QCPItemStraightLine(plot);
  line->setClipAxisRect(rect);
  line->point1->setAxes(x, y);
  line->point2->setAxes(x, y);
  line->point1->setCoords(0, reference);
  line->point2->setCoords(1, reference);
  line->setPen(QPen(QColor(0xD5, 0x5E, 0x00), 1.5, Qt::DashLine));
}

void emptyNote(QCustomPlot* plot, QCPAxisRect* rect, const QColor& muted) {
  auto* empty = new QCPItemText(plot);
  empty->setClipAxisRect(rect);
  empty->position->setType(QCPItemPosition::ptAxisRectRatio);
  empty->position->setAxisRect(rect);
  empty->position->setCoords(0.5, 0.5);
  empty->setText(QStringLiteral("No speedups to show yet: tick runs and set a baseline, or run the ladder."));
  empty->setColor(muted);
}

QCPBars* newBars(QCPAxis* x, QCPAxis* y, const QBrush& brush, const QPen& pen) {
  auto* b = new QCPBars(x, y);
  b->setBrush(brush);
  b->setPen(pen);
  b->setWidth(0.6);
  return b;
}

}  // namespace

// The title over one axis rect, in the window's palette (light or dark, like the live plots).
QCPAxisRect* SpeedupChart::titledRect(const QString& titleText) {
  const QPalette pal = palette();
  const QColor base = pal.color(QPalette::Base), ink = pal.color(QPalette::Text);
  plot_->setBackground(base);
  auto* rect = new QCPAxisRect(plot_);
  rect->setBackground(base);
  const QFont titleFont(font().family(), 11, QFont::Bold);
  auto* title = new QCPTextElement(plot_, wrapped(titleText, QFontMetrics(titleFont), width() - 16), titleFont);
  title->setTextColor(ink);
  plot_->plotLayout()->addElement(0, 0, title);
  plot_->plotLayout()->addElement(1, 0, rect);
  inkAxes({rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}, ink);
  return rect;
}

// A bar's annotation above it (above its whisker), fitted to its share of the width.
void SpeedupChart::annotate(const wb::render::Bar& b, QCPAxisRect* rect, double key, double at, int room) {
  const QColor ink = palette().color(QPalette::Text), muted = palette().color(QPalette::PlaceholderText);
  auto* text = new QCPItemText(plot_);
  text->setClipAxisRect(rect);
  text->position->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
  text->position->setCoords(key, at);
  text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
  text->setTextAlignment(Qt::AlignHCenter);
  text->setColor(b.skipped ? muted : ink);
  QFont annotationFont = font();
  annotationFont.setBold(!b.skipped && b.bold);  // as in the SVG: a clear verdict is bold; a reason, noise or one pair is not
  text->setFont(annotationFont);
  text->setText(fittedAnnotation(b, annotationFont, room, text));
}

void SpeedupChart::setBars(const wb::render::BarChartSpec& spec) {
  spec_ = spec;
  plot_->clearPlottables();
  plot_->clearItems();
  plot_->plotLayout()->clear();
  QCPAxisRect* rect = titledRect(QString::fromStdString(spec.title));
  QCPAxis* x = rect->axis(QCPAxis::atBottom);
  QCPAxis* y = rect->axis(QCPAxis::atLeft);
  y->setLabel(QString::fromStdString(spec.y_label));
  const QColor ink = palette().color(QPalette::Text);
  auto* done = newBars(x, y, QColor(0x00, 0x72, 0xB2), Qt::NoPen);
  auto* skipped = newBars(x, y, Qt::NoBrush, QPen(QColor(0x99, 0x99, 0x99), 1, Qt::DashLine));
  // Each measured bar's 95 % interval as an error bar (NaN: none, e.g. 1 run each).
  auto* interval = new QCPErrorBars(x, y);
  interval->setDataPlottable(done);
  interval->setPen(QPen(ink, 1.2));
  interval->setWhiskerWidth(10);
  QVector<double> below, above;

  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  // Each bar has its share of the width: its label is elided in the middle to it (names end in
  // what tells them apart) and its annotation fits it (a smaller font, then without the detail
  // line), so neighbours never run into each other.
  const int room = barRoom(int(spec.bars.size()));
  const QFontMetrics metrics(x->tickLabelFont());
  double top = spec.reference;
  for (size_t i = 0; i < spec.bars.size(); ++i) {
    const auto& b = spec.bars[i];
    const double key = static_cast<double>(i + 1);
    ticker->addTick(key, twoLines(QString::fromStdString(b.label), metrics, room));
    const double value = b.skipped ? spec.reference : b.value;
    (b.skipped ? skipped : done)->addData(key, value);
    const bool hasInterval = !b.skipped && std::isfinite(b.lo) && std::isfinite(b.hi);
    if (!b.skipped) below << (hasInterval ? value - b.lo : qQNaN()), above << (hasInterval ? b.hi - value : qQNaN());
    const double textAt = hasInterval ? std::max(value, b.hi) : value;  // above the whisker
    top = std::max(top, textAt);
    annotate(b, rect, key, textAt, room);
  }
  interval->setData(below, above);
  x->setTicker(ticker);
  x->setTickLabelRotation(0);  // a slanted label takes the height the bars need
  x->setRange(0.4, std::max<double>(1, spec.bars.size()) + 0.6);
  x->grid()->setVisible(false);
  y->setRange(0, top * 1.3);
  referenceLine(plot_, rect, x, y, spec.reference);
  if (spec.bars.empty()) emptyNote(plot_, rect, palette().color(QPalette::PlaceholderText));
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void SpeedupChart::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) setBars(spec_);
}

void SpeedupChart::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (!spec_.bars.empty()) setBars(spec_);  // re-elide the labels to the new width
}

bool SpeedupChart::save(const QString& path, QString* error) const {
  const QString ext = QFileInfo(path).suffix().toLower();
  const std::string target = QFile::encodeName(path).toStdString();
  Status st;
  if (ext == QLatin1String("svg")) {
    st = writeFileAtomic(target, wb::render::toSvg(wb::render::barChart(spec_)));
  } else if (ext == QLatin1String("png")) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (!plot_->toPixmap(0, 0, 2.0).save(&buffer, "PNG")) st = makeError(Errc::Io, "could not render the chart as PNG");
    else st = writeFileAtomic(target, bytes.toStdString());
  } else if (ext == QLatin1String("pdf")) {
    // QCustomPlot writes the PDF itself: write beside the target, then rename over it.
    const QString tmp = path + QStringLiteral(".tmp-pdf");
    if (!plot_->savePdf(tmp)) {
      QFile::remove(tmp);
      st = makeError(Errc::Io, "cannot write " + target + " (is the folder writable?)");
    } else {
      auto bytes = readFile(QFile::encodeName(tmp).toStdString());
      QFile::remove(tmp);
      st = bytes.ok() ? writeFileAtomic(target, *bytes) : Status(bytes.error());
    }
  } else {
    st = makeError(Errc::Io, "unknown image format \"" + ext.toStdString() + "\": use .png, .svg or .pdf");
  }
  if (!st.ok() && error) *error = QString::fromStdString(st.error().message);
  return st.ok();
}

}  // namespace wb::ui
