#include "setup/schema_range.h"

#include <QDoubleSpinBox>
#include <QEvent>
#include <QKeyEvent>
#include <QLineEdit>
#include <QLocale>
#include <QSpinBox>
#include <QValidator>

#include <algorithm>
#include <cmath>
#include <limits>

#include <QCoreApplication>

#include "wb/common/config_schema.h"

namespace wb::ui {
namespace {

const Range& rangeOf(const char* path) {
  const FieldSpec* spec = findFieldSpec(path);
  Q_ASSERT_X(spec && spec->number, "setSchemaRange", path);
  static const Range any;
  return spec ? spec->range : any;
}

// The text between the box's prefix and suffix.
QString numberPart(const QAbstractSpinBox* box, QString text) {
  QString prefix, suffix;
  if (auto* s = qobject_cast<const QSpinBox*>(box)) prefix = s->prefix(), suffix = s->suffix();
  if (auto* d = qobject_cast<const QDoubleSpinBox*>(box)) prefix = d->prefix(), suffix = d->suffix();
  if (!prefix.isEmpty() && text.startsWith(prefix)) text.remove(0, prefix.size());
  if (!suffix.isEmpty() && text.endsWith(suffix)) text.chop(suffix.size());
  return text.trimmed();
}

// A number, or the sign a number is being typed after ("-" in a box whose least is 0: typing -5
// must not leave 5).
bool isNumber(const QAbstractSpinBox* box, const QString& text) {
  if (text == QLatin1String("-") || text == QLatin1String("+")) return true;
  bool ok = false;
  box->locale().toDouble(text, &ok);
  if (!ok) text.toDouble(&ok);
  return ok;
}

// The box's own check, except that a number out of its range is Intermediate (kept, not
// acceptable) instead of Invalid (the keystroke dropped).
// The box's own validator (Qt's, which also takes its special value text and the box's own
// textFromValue) decides first.
class KeepNumbersValidator : public QValidator {
 public:
  KeepNumbersValidator(QAbstractSpinBox* box, const QValidator* own) : QValidator(box), box_(box), own_(own) {}
  State validate(QString& input, int& pos) const override {
    const State own = own_ ? own_->validate(input, pos) : box_->validate(input, pos);
    return own == Invalid && isNumber(box_, numberPart(box_, input)) ? Intermediate : own;
  }
  void fixup(QString& input) const override {
    if (own_) own_->fixup(input);
    else box_->fixup(input);
  }

 private:
  QAbstractSpinBox* box_;
  const QValidator* own_;
};

// Leaving the box, or Enter, with a number out of range: the box would put its last good value
// back; the text stays instead (the line edit still hears of the focus leaving).
class KeepNumbersFilter : public QObject {
 public:
  explicit KeepNumbersFilter(QAbstractSpinBox* box) : QObject(box), box_(box) {}
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched != box_ || box_->hasAcceptableInput()) return false;
    if (event->type() == QEvent::FocusOut) {
      if (QLineEdit* edit = box_->findChild<QLineEdit*>()) QCoreApplication::sendEvent(edit, event);
      box_->update();
      return true;
    }
    if (event->type() == QEvent::KeyPress) {
      const int key = static_cast<QKeyEvent*>(event)->key();
      return key == Qt::Key_Return || key == Qt::Key_Enter;
    }
    return false;
  }

 private:
  QAbstractSpinBox* box_;
};

}  // namespace

void keepTypedNumbers(QAbstractSpinBox* box) {
  QLineEdit* edit = box->findChild<QLineEdit*>();
  if (!edit || box->property("keepsTypedNumbers").toBool()) return;
  box->setProperty("keepsTypedNumbers", true);
  edit->setValidator(new KeepNumbersValidator(box, edit->validator()));
  box->installEventFilter(new KeepNumbersFilter(box));
}

void setSchemaRange(QSpinBox* box, const char* path, double scale) {
  const Range& r = rangeOf(path);
  const double top = std::numeric_limits<int>::max();
  const double lo = r.min * scale + (r.min_included ? 0 : 1), hi = r.max * scale - (r.max_included ? 0 : 1);
  box->setProperty("schemaScale", scale);
  box->setRange(int(std::clamp(lo, -top, top)), int(std::clamp(hi, -top, top)));
}

void setSchemaRange(QDoubleSpinBox* box, const char* path) {
  const Range& r = rangeOf(path);
  const double step = std::pow(10.0, -box->decimals());
  const double lo = r.min_included ? r.min : r.min + step, hi = r.max_included ? r.max : r.max - step;
  box->setRange(std::max(lo, -kDoubleBoxLimit), std::min(hi, kDoubleBoxLimit));
}

}  // namespace wb::ui
