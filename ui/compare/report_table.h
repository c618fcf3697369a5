#pragma once
// A wb::report::Table in a QTableWidget: the comparison, the ladder and tune's finals show their
// tables the one way (read-only cells, the whole text as tooltip, numbers right-aligned, columns
// to their contents up to 360 px). Thread affinity: GUI thread.
#include <QTableWidget>

#include "wb/report/table.h"

namespace wb::ui {

void fillTable(QTableWidget* w, const report::Table& t);

// A table that says, in its middle, what it will hold while it has no rows: no empty box.
class PlaceholderTable : public QTableWidget {
 public:
  explicit PlaceholderTable(QWidget* parent = nullptr) : QTableWidget(parent) {}
  void setPlaceholder(const QString& text);
  QString placeholder() const { return placeholder_; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QString placeholder_;
};

}  // namespace wb::ui
