#include "setup/field_errors.h"

#include <QLabel>
#include <QPalette>
#include <QWidget>

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

void FieldErrors::show(const std::vector<FieldError>& errors) {
  QHash<QLabel*, QStringList> texts;
  shown_.clear();
  for (const auto& e : errors) {
    const QString msg = QString::fromStdString(e.str());
    shown_ << msg;
    if (QLabel* l = labelFor(e.path)) texts[l] << msg;
  }
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
  if (general_) general_->setStyleSheet(QStringLiteral("color: %1;").arg(errorColor(general_->parentWidget())));
}

}  // namespace wb::ui
