#pragma once
// A wb::report::Table in a QTableWidget: the comparison, the ladder and tune's finals show their
// tables the one way (read-only cells, the whole text as tooltip, numbers right-aligned, columns
// to their contents up to 360 px). Thread affinity: GUI thread.
#include "wb/report/table.h"

class QTableWidget;

namespace wb::ui {

void fillTable(QTableWidget* w, const report::Table& t);

}  // namespace wb::ui
