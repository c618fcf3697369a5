#include "compare/answer_label.h"

#include <QFontMetrics>

namespace wb::ui {

AnswerLabel::AnswerLabel(int maxLines, QWidget* parent) : QLabel(parent), maxLines_(maxLines) {
  QFont big = font();
  big.setPointSizeF(big.pointSizeF() * 1.15);
  big.setBold(true);
  setFont(big);
  setWordWrap(true);
  setTextInteractionFlags(Qt::TextSelectableByMouse);
  setMinimumWidth(1);
  setMaximumHeight(linesHeight() + 2);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

// The height maxLines_ lines of this font take, as the label lays them out.
int AnswerLabel::linesHeight() const {
  QStringList lines;
  for (int i = 0; i < maxLines_; ++i) lines << QStringLiteral("X");
  return fontMetrics().boundingRect(QRect(0, 0, 1000, 1 << 20), Qt::TextWordWrap, lines.join(QLatin1Char('\n'))).height();
}

void AnswerLabel::setAnswer(const QString& sentence) {
  answer_ = sentence;
  setToolTip(sentence);
  fit();
}

void AnswerLabel::resizeEvent(QResizeEvent* event) {
  QLabel::resizeEvent(event);
  fit();
}

// The longest prefix, cut at a space, that wraps into maxLines_ at this width (with "…").
void AnswerLabel::fit() {
  const QFontMetrics fm = fontMetrics();
  const int width = std::max(1, contentsRect().width());
  const int room = linesHeight();
  auto fits = [&](const QString& s) { return fm.boundingRect(QRect(0, 0, width, 1 << 20), Qt::TextWordWrap, s).height() <= room; };
  if (fits(answer_)) {
    if (text() != answer_) setText(answer_);
    return;
  }
  QString shown = answer_;
  while (shown.contains(QLatin1Char(' '))) {
    shown.truncate(shown.lastIndexOf(QLatin1Char(' ')));
    if (fits(shown + QStringLiteral(" …"))) break;
  }
  setText(shown + QStringLiteral(" …"));
}

}  // namespace wb::ui
