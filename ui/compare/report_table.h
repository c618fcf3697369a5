#pragma once
// A wb::render::Table in a QTableWidget: the comparison, the ladder and tune's finals show their
// tables the one way (read-only cells, the whole text as tooltip, numbers right-aligned, columns
// to their contents up to 360 px). Thread affinity: GUI thread.
#include <QTableWidget>

#include <functional>

#include "wb/render/table.h"
#include "wb/report/report.h"

namespace wb::ui {

class SpeedupChart;

void fillTable(QTableWidget* w, const render::Table& t);

// Asks where to export and in which format (a report as html, md, csv, tex or json; a chart as
// png, svg or pdf; with `tensorBoard` given, also TensorBoard's event files, a folder): the path,
// with the chosen filter's extension when none was typed; "" when cancelled. *tensorBoard says
// whether the TensorBoard folder was chosen. The Compare and Experiments tabs' Export….
QString exportPathFromDialog(QWidget* parent, const QString& title, const QString& startPath, bool* tensorBoard = nullptr);
// Writes `path` by its extension: png, svg or pdf the chart, html, md, csv, tex or json the report.
// False with the reason in *error (an empty chart; an unknown extension, named with the ones it takes).
bool writeReportOrChart(const QString& path, const report::Report& report, const SpeedupChart& chart, QString* error);

// Export…: asks where (exportPathFromDialog), writes there with `write` (a TensorBoard folder with
// `writeTensorBoard`, offered when given), and warns with its error when it fails. The path
// written; "" when cancelled or failed.
using ExportWriter = std::function<bool(const QString& path, QString* error)>;
QString exportWithDialog(QWidget* parent, const QString& title, const QString& startPath, const ExportWriter& write,
                         const ExportWriter& writeTensorBoard = {});

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
