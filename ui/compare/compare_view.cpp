#include "compare/compare_view.h"

#include <QLabel>
#include <QMessageBox>
#include <QVBoxLayout>

#include "runs/runs_model.h"

namespace wb::ui {

CompareView::CompareView(RunsModel* model, QWidget* parent) : QWidget(parent), model_(model) {
  auto* layout = new QVBoxLayout(this);
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  summary_->setAlignment(Qt::AlignCenter);
  summary_->setObjectName(QStringLiteral("compareSummary"));
  layout->addWidget(summary_);
  connect(model_, &RunsModel::shownChanged, this, [this] { refresh(); });
  connect(model_, &RunsModel::baselineChanged, this, [this] { refresh(); });
  connect(model_, &RunsModel::runAdded, this, [this] { refresh(); });
  refresh();
}

bool CompareView::canExport() const { return false; }

void CompareView::exportDialog() {
  QMessageBox::information(this, QStringLiteral("Export"),
                           QStringLiteral("Comparison tables and reports are not available in this build yet."));
}

void CompareView::refresh() {
  const int shown = int(model_->shownRuns().size());
  const QString base = model_->baseline() ? model_->baseline()->name() : QStringLiteral("none (right-click a run → Set as baseline)");
  summary_->setText(QStringLiteral("Comparison of the ticked runs against the baseline.\n\nTicked runs: %1\nBaseline: %2")
                        .arg(shown)
                        .arg(base));
}

}  // namespace wb::ui
