#pragma once
// Shows configErrors next to the widgets they belong to. Each field registers a hidden label
// under its widget; an error whose path has no label goes to a general label. A message names
// the field by the words beside it in its form (else the schema's label), and the field itself
// (the widget whose objectName is the path) is outlined while it has one.
//
// Thread affinity: GUI thread. The labels belong to the widgets' layouts.
#include <QHash>
#include <QLabel>
#include <QPointer>
#include <QString>
#include <QStringList>

#include <vector>

#include "wb/common/config.h"

class QLabel;
class QWidget;

namespace wb::ui {

class FieldErrors {
 public:
  // A hidden, word-wrapped label for errors of `path` (objectName "error:<path>").
  QLabel* makeLabel(const QString& path, QWidget* parent);
  // Errors of `alias` are shown on `path`'s label (e.g. early_stopping.mode on monitor's).
  void addAlias(const QString& alias, const QString& path);
  void setGeneralLabel(QLabel* label) { general_ = label; }

  // Shows each error as "<label>: <value> — <allowed>" under its field; clears the others.
  void show(const std::vector<FieldError>& errors);
  // The words a user sees for `path` (a config path): its form label, else the schema's, else the path.
  QString fieldLabel(const QString& path) const;
  // The messages shown now, in order.
  const QStringList& shown() const { return shown_; }
  // Recolours the labels for the current palette (dark or light).
  void updateColors();

  // The label of `path` (a config path) when it shows an error now, else nullptr.
  QLabel* visibleLabel(const QString& path) const;

  static QString errorColor(const QWidget* w);

 private:
  QLabel* labelFor(const std::string& path) const;
  QWidget* fieldOf(const QString& path) const;
  QString message(const FieldError& e) const;
  void outline(QWidget* field, bool on);

  QHash<QString, QPointer<QLabel>> labels_;
  QHash<QString, QString> aliases_;
  QPointer<QLabel> general_;
  QStringList shown_;
  QList<QPointer<QWidget>> outlined_;
};

}  // namespace wb::ui
