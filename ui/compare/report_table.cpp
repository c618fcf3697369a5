#include "compare/report_table.h"

#include "compare/speedup_chart.h"
#include "wb/report/export.h"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QPainter>
#include <QStringList>

#include <algorithm>

namespace wb::ui {

void fillTable(QTableWidget* w, const render::Table& t) {
  const auto qs = [](const std::string& s) { return QString::fromStdString(s); };
  w->clear();
  w->setColumnCount(int(t.columns.size()));
  w->setRowCount(int(t.rows.size()));
  QStringList headers;
  for (const auto& c : t.columns) headers << qs(c.title);
  w->setHorizontalHeaderLabels(headers);
  for (int r = 0; r < int(t.rows.size()); ++r) {
    const auto& row = t.rows[size_t(r)];
    for (int c = 0; c < int(row.size()) && c < int(t.columns.size()); ++c) {
      auto* item = new QTableWidgetItem(qs(row[size_t(c)].text));
      item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
      item->setToolTip(qs(row[size_t(c)].text));
      if (row[size_t(c)].number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      w->setItem(r, c, item);
    }
  }
  w->resizeColumnsToContents();
  for (int c = 0; c < w->columnCount(); ++c) w->setColumnWidth(c, std::min(w->columnWidth(c), 360));
}

void PlaceholderTable::setPlaceholder(const QString& text) {
  placeholder_ = text;
  viewport()->update();
}

void PlaceholderTable::paintEvent(QPaintEvent* event) {
  QTableWidget::paintEvent(event);
  if (rowCount() > 0 || placeholder_.isEmpty()) return;
  QPainter p(viewport());
  p.setPen(palette().placeholderText().color());
  p.drawText(viewport()->rect().adjusted(12, 8, -12, -8), Qt::AlignCenter | Qt::TextWordWrap, placeholder_);
}

QString exportPathFromDialog(QWidget* parent, const QString& title, const QString& startPath, bool* tensorBoard) {
  static const QStringList kFilters = {QStringLiteral("HTML report (*.html)"), QStringLiteral("Markdown (*.md)"),
                                       QStringLiteral("CSV (*.csv)"),          QStringLiteral("LaTeX (*.tex)"),
                                       QStringLiteral("JSON (*.json)"),        QStringLiteral("Chart as PNG (*.png)"),
                                       QStringLiteral("Chart as SVG (*.svg)"), QStringLiteral("Chart as PDF (*.pdf)")};
  // A folder, one subfolder of event files per run: no extension to add.
  static const QString kTensorBoard = QStringLiteral("TensorBoard event files, a folder per run (*)");
  QStringList filters = kFilters;
  if (tensorBoard) filters << kTensorBoard;
  QString filter = filters.front();
  QString path = QFileDialog::getSaveFileName(parent, title, startPath, filters.join(QStringLiteral(";;")), &filter,
                                              tensorBoard ? QFileDialog::DontConfirmOverwrite : QFileDialog::Options());
  if (tensorBoard) *tensorBoard = filter == kTensorBoard;
  if (tensorBoard && *tensorBoard) return path;
  if (!path.isEmpty() && QFileInfo(path).suffix().isEmpty()) {  // take the extension from the chosen filter
    const int star = filter.indexOf(QStringLiteral("*."));
    path += filter.mid(star + 1, filter.indexOf(QLatin1Char(')'), star) - star - 1);
  }
  return path;
}

bool writeReportOrChart(const QString& path, const report::Report& report, const SpeedupChart& chart, QString* error) {
  const QString ext = QFileInfo(path).suffix().toLower();
  if (ext == QLatin1String("png") || ext == QLatin1String("svg") || ext == QLatin1String("pdf")) {
    if (!chart.isEmpty()) return chart.save(path, error);
    if (error) *error = QStringLiteral("There is no chart yet: tick runs to compare with the baseline.");
    return false;
  }
  const std::string file = QFile::encodeName(path).toStdString();
  auto format = report::formatForPath(file);
  if (!format) {
    if (error) *error = QStringLiteral("Unknown format \"%1\": use .html, .md, .csv, .tex, .json, .png, .svg or .pdf.").arg(ext);
    return false;
  }
  auto st = report::writeReport(report, *format, file);
  if (!st.ok() && error) *error = QString::fromStdString(st.error().message);
  return st.ok();
}

QString exportWithDialog(QWidget* parent, const QString& title, const QString& startPath, const ExportWriter& write,
                         const ExportWriter& writeTensorBoard) {
  bool tensorBoard = false;
  const QString path = exportPathFromDialog(parent, title, startPath, writeTensorBoard ? &tensorBoard : nullptr);
  if (path.isEmpty()) return path;
  QString error;
  if ((tensorBoard ? writeTensorBoard : write)(path, &error)) return path;
  QMessageBox::warning(parent, QStringLiteral("Export"), error);
  return QString();
}

}  // namespace wb::ui
