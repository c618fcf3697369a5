#include "setup/field_errors.h"

#include <QFormLayout>
#include <QLabel>
#include <QPalette>
#include <QWidget>

#include "wb/common/config_schema.h"

namespace wb::ui {

QString FieldErrors::errorColor(const QWidget* w) {
  // Readable red on both palettes: light text on dark windows, deep red on light ones.
  const bool dark = w && w->palette().color(QPalette::Window).lightness() < 128;
  return dark ? QStringLiteral("#ff8a80") : QStringLiteral("#b3261e");
}

QLabel* FieldErrors::makeLabel(const QString& path, QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setObjectName(QStringLiteral("error:") + path);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setStyleSheet(QStringLiteral("color: %1;").arg(errorColor(parent)));
  label->hide();
  labels_.insert(path, label);
  return label;
}

void FieldErrors::addAlias(const QString& alias, const QString& path) { aliases_.insert(alias, path); }

QLabel* FieldErrors::labelFor(const std::string& path) const {
  QString p = QString::fromStdString(path);
  if (aliases_.contains(p)) p = aliases_.value(p);
  // Exact field, else the nearest registered parent ("data.augment.hflip" -> "data.augment").
  while (!p.isEmpty()) {
    if (auto l = labels_.value(p)) return l;
    const int dot = p.lastIndexOf(QLatin1Char('.'));
    if (dot < 0) break;
    p.truncate(dot);
  }
  return general_;
}

// The input whose objectName is the path, beside its error label.
QWidget* FieldErrors::fieldOf(const QString& path) const {
  QString p = aliases_.value(path, path);
  QLabel* l = labels_.value(p);
  return l && l->parentWidget() ? l->parentWidget()->findChild<QWidget*>(p) : nullptr;
}

QString FieldErrors::fieldLabel(const QString& path) const {
  // The form's label when the field is the form's own (a box sharing a row is named by the schema).
  if (QWidget* w = fieldOf(path); w && w->parentWidget())
    if (auto* form = qobject_cast<QFormLayout*>(w->parentWidget()->layout()))
      if (auto* label = qobject_cast<QLabel*>(form->labelForField(w)); label && !label->text().isEmpty())
        return label->text().remove(QLatin1Char('&'));
  if (const FieldSpec* spec = findFieldSpec(path.toStdString())) return QString::fromUtf8(spec->label);
  return path;
}

QString FieldErrors::message(const FieldError& e) const {
  return fieldLabel(QString::fromStdString(e.path)) + QStringLiteral(": ") + QString::fromStdString(e.value) +
         QStringLiteral(" \u2014 ") + QString::fromStdString(e.allowed);
}

// A red frame on the input itself, so the field is found without reading every message.
void FieldErrors::outline(QWidget* field, bool on) {
  if (!field) return;
  const char* kBefore = "wbStyleBeforeError";
  if (on && !field->property(kBefore).isValid()) field->setProperty(kBefore, field->styleSheet());
  if (!on && field->property(kBefore).isValid()) {
    field->setStyleSheet(field->property(kBefore).toString());
    field->setProperty(kBefore, QVariant());
    return;
  }
  if (on)
    field->setStyleSheet(QStringLiteral("%1 { border: 2px solid %2; border-radius: 3px; }")
                             .arg(QString::fromLatin1(field->metaObject()->className()), errorColor(field)));
}

void FieldErrors::show(const std::vector<FieldError>& errors) {
  QHash<QLabel*, QStringList> texts;
  shown_.clear();
  QList<QPointer<QWidget>> outlined;
  for (const auto& e : errors) {
    const QString msg = message(e);
    shown_ << msg;
    if (QLabel* l = labelFor(e.path)) texts[l] << msg;
    if (QWidget* f = fieldOf(QString::fromStdString(e.path))) outlined << f;
  }
  for (const auto& f : outlined_)
    if (!outlined.contains(f)) outline(f, false);
  for (const auto& f : outlined) outline(f, true);
  outlined_ = outlined;
  auto apply = [&](QLabel* l) {
    if (!l) return;
    const QStringList t = texts.value(l);
    l->setText(t.join(QLatin1Char('\n')));
    l->setVisible(!t.isEmpty());
  };
  for (const auto& l : labels_) apply(l);
  apply(general_);
}

QLabel* FieldErrors::visibleLabel(const QString& path) const {
  if (path.isEmpty()) return nullptr;
  QLabel* l = labels_.value(path);
  return l && !l->isHidden() ? l : nullptr;
}

void FieldErrors::updateColors() {
  for (const auto& l : labels_)
    if (l) l->setStyleSheet(QStringLiteral("color: %1;").arg(errorColor(l->parentWidget())));
  for (const auto& f : outlined_) outline(f, true);
  if (general_) general_->setStyleSheet(QStringLiteral("color: %1;").arg(errorColor(general_->parentWidget())));
}

}  // namespace wb::ui
