#include "compare/whatif_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QVBoxLayout>

namespace wb::ui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

WhatIfView::WhatIfView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(QStringLiteral("Run:"), this));
  runs_ = new QComboBox(this);
  runs_->setObjectName(QStringLiteral("whatIfRun"));
  runs_->setToolTip(QStringLiteral("The run whose validation curve is replayed through the early-stopping rule"));
  // Long run names must not widen the tab (and squeeze the chart beside it): elided in the box.
  runs_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  runs_->setMinimumContentsLength(14);
  top->addWidget(runs_, 1);
  layout->addLayout(top);
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("whatIfSummary"));
  summary_->setWordWrap(true);
  layout->addWidget(summary_);
  table_ = new QTableWidget(this);
  table_->setObjectName(QStringLiteral("whatIfTable"));
  table_->verticalHeader()->setVisible(false);
  layout->addWidget(table_, 1);
  connect(runs_, &QComboBox::currentIndexChanged, this, [this](int i) {
    chosen_ = runs_->itemText(i);
    showRun(i);
  });
  showRun(-1);
}

void WhatIfView::setRuns(const std::vector<const wb::records::RunRecord*>& runs) {
  whatIfs_.clear();
  {
    const QSignalBlocker block(runs_);
    runs_->clear();
    for (const auto* run : runs) {
      whatIfs_.push_back(wb::report::earlyStoppingWhatIf(*run));
      runs_->addItem(qs(whatIfs_.back().run) + (runs_->count() == 0 ? QStringLiteral(" (baseline)") : QString()));
    }
    const int again = runs_->findText(chosen_);
    runs_->setCurrentIndex(again >= 0 ? again : (runs_->count() > 0 ? 0 : -1));
  }
  showRun(runs_->currentIndex());
}

void WhatIfView::showRun(int index) {
  table_->clear();
  table_->setRowCount(0);
  table_->setColumnCount(0);
  if (index < 0 || index >= int(whatIfs_.size())) {
    summary_->setText(QStringLiteral("Set a baseline: the what-if replays a finished run's evaluations through the "
                                     "early-stopping rule for each patience and min_delta."));
    return;
  }
  const auto& w = whatIfs_[size_t(index)];
  const wb::render::Table t = wb::report::whatIfTable(w);
  QStringList notes;
  for (const auto& n : t.notes) notes << qs(n);
  // One line on the tab (the table needs the room); how it is computed in the tooltip.
  summary_->setToolTip(notes.join(QLatin1Char('\n')));
  if (!w.problem.empty()) {
    summary_->setText(qs(w.problem) + QLatin1Char('.'));
    return;
  }
  summary_->setText(QStringLiteral("%1 evaluations of %2 (%3) replayed through the trainer's rule%4. Bold: this run's "
                                   "setting. Hover here for how each figure is measured.")
                        .arg(w.evaluations)
                        .arg(qs(w.monitor), qs(w.mode),
                             w.truncated ? QStringLiteral("; the run recorded only its first epochs") : QString()));
  table_->setColumnCount(int(t.columns.size()));
  table_->setRowCount(int(t.rows.size()));
  QStringList headers;
  for (const auto& c : t.columns) headers << qs(c.title);
  table_->setHorizontalHeaderLabels(headers);
  for (int r = 0; r < int(t.rows.size()); ++r) {
    const auto& row = t.rows[size_t(r)];
    const bool own = w.rows[size_t(r)].as_run;
    for (int c = 0; c < int(row.size()); ++c) {
      auto* item = new QTableWidgetItem(qs(row[size_t(c)].text));
      item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
      if (row[size_t(c)].number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      if (own) {
        QFont bold = item->font();
        bold.setBold(true);
        item->setFont(bold);
      }
      table_->setItem(r, c, item);
    }
  }
  table_->resizeColumnsToContents();
}

}  // namespace wb::ui
