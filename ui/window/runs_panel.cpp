#include "window/runs_panel.h"

#include <QApplication>
#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QInputDialog>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>

#include "runs/run.h"
#include "runs/run_queue.h"
#include "runs/runs_model.h"
#include "wb/proto/rundir.h"
#include "wb/proto/run_summary.h"

namespace wb::ui {

namespace {

// Progress column: a bar with "45 % · ETA 1:23" on it.
class ProgressDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
    const double p = index.data(RunsModel::ProgressRole).toDouble();
    if (!std::isfinite(p)) {
      QStyledItemDelegate::paint(painter, option, index);
      return;
    }
    QStyleOptionViewItem bg = option;
    initStyleOption(&bg, index);
    bg.text.clear();
    option.widget->style()->drawControl(QStyle::CE_ItemViewItem, &bg, painter, option.widget);
    QStyleOptionProgressBar bar;
    bar.rect = option.rect.adjusted(2, 3, -2, -3);
    bar.minimum = 0;
    bar.maximum = 1000;
    bar.progress = int(std::clamp(p, 0.0, 1.0) * 1000);
    bar.text = index.data(Qt::DisplayRole).toString();
    bar.textVisible = true;
    bar.textAlignment = Qt::AlignCenter;
    bar.state = option.state | QStyle::State_Horizontal;
    bar.palette = option.palette;
    option.widget->style()->drawControl(QStyle::CE_ProgressBar, &bar, painter, option.widget);
  }
};

QString readTail(const QString& path, int maxLines) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  const qint64 size = f.size();
  f.seek(std::max<qint64>(0, size - 16384));  // the end is what explains a failure
  QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'));
  while (!lines.isEmpty() && lines.last().trimmed().isEmpty()) lines.removeLast();
  if (lines.size() > maxLines) lines = lines.mid(lines.size() - maxLines);
  return lines.join(QLatin1Char('\n'));
}

}  // namespace

RunsPanel::RunsPanel(RunsModel* model, RunQueue* queue, QWidget* parent)
    : QWidget(parent), model_(model), queue_(queue) {
  setObjectName(QStringLiteral("runsPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* split = new QSplitter(Qt::Horizontal, this);
  layout->addWidget(split);

  view_ = new QTableView(split);
  view_->setObjectName(QStringLiteral("runsView"));
  view_->setModel(model_);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->setAlternatingRowColors(true);
  view_->setContextMenuPolicy(Qt::CustomContextMenu);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 10);
  view_->setItemDelegateForColumn(RunsModel::ColProgress, new ProgressDelegate(view_));
  view_->setWordWrap(false);
  view_->setTextElideMode(Qt::ElideMiddle);  // ladder runs share a name and differ at the end
  QHeaderView* h = view_->horizontalHeader();
  h->setSectionResizeMode(RunsModel::ColName, QHeaderView::Stretch);
  const QFontMetrics fm = view_->fontMetrics();
  h->resizeSection(RunsModel::ColStatus, fm.horizontalAdvance(QStringLiteral("early-stopped")) + 24);
  h->resizeSection(RunsModel::ColProgress, fm.horizontalAdvance(QStringLiteral("100 % · ETA 10:00:00")) + 16);
  h->resizeSection(RunsModel::ColThroughput, fm.horizontalAdvance(QStringLiteral("Train samples/s")) + 24);
  h->resizeSection(RunsModel::ColBestAcc, fm.horizontalAdvance(QStringLiteral("Best val acc")) + 24);
  h->resizeSection(RunsModel::ColSpeedup, fm.horizontalAdvance(QStringLiteral("Speedup")) + 28);
  h->setMinimumSectionSize(40);

  details_ = new QPlainTextEdit(split);
  details_->setObjectName(QStringLiteral("runDetails"));
  details_->setReadOnly(true);
  details_->setPlaceholderText(QStringLiteral("Select a run to see its folder, error and log tail."));
  details_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);

  connect(view_, &QWidget::customContextMenuRequested, this, &RunsPanel::showContextMenu);
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this] {
    updateDetails();
    Q_EMIT currentRunChanged(currentRun());
  });
  connect(model_, &QAbstractItemModel::dataChanged, this, [this](const QModelIndex& a, const QModelIndex& b) {
    const int row = view_->currentIndex().row();
    if (row >= a.row() && row <= b.row()) updateDetails();
  });
}

Run* RunsPanel::currentRun() const { return model_->runAt(view_->currentIndex().row()); }

void RunsPanel::selectRun(Run* run) {
  const int row = model_->rowOf(run);
  if (row >= 0) view_->setCurrentIndex(model_->index(row, RunsModel::ColName));
}

void RunsPanel::updateDetails() {
  Run* run = currentRun();
  if (!run) {
    details_->clear();
    return;
  }
  QStringList out;
  out << run->name() + QStringLiteral(" — ") + statusWord(run->status());
  if (!run->runDir().isEmpty()) out << run->runDir();
  if (!run->errorMessage().isEmpty()) out << QString() << QStringLiteral("Error: ") + run->errorMessage();
  QString tail = run->logTail();
  if (tail.isEmpty() && run->status() == RunStatus::Failed && !run->runDir().isEmpty())
    tail = readTail(QString::fromStdString(proto::RunDir{run->runDir().toStdString()}.rankLog(0).string()), 30);
  if (!tail.isEmpty()) out << QString() << QStringLiteral("Log tail:") << tail;
  if (!run->warnings().isEmpty()) out << QString() << QStringLiteral("Warnings:") << run->warnings();
  const QString text = out.join(QLatin1Char('\n'));
  if (details_->toPlainText() != text) details_->setPlainText(text);
}

void RunsPanel::stopRun(Run* run) {
  if (!run) return;
  queue_->stop(run);
}

void RunsPanel::renameRun(Run* run, const QString& newName) {
  const QString name = newName.trimmed();
  if (!run || name.isEmpty()) return;
  if (run->status() == RunStatus::Queued) {
    auto cfg = run->config();
    cfg["name"] = name.toStdString();
    run->setConfig(cfg);
  } else if (isFinal(run->status()) && !run->runDir().isEmpty()) {
    // The run directory is the record: exports and other windows see the new name.
    proto::RunDir rd{run->runDir().toStdString()};
    auto sum = proto::readJsonFile(rd.summary());
    if (sum.ok() && sum->is_object()) {
      proto::RunSummary renamed = proto::readRunSummary(*sum);  // fields it does not know are kept
      renamed.name = name.toStdString();
      if (auto st = proto::writeJsonAtomic(rd.summary(), proto::toJson(renamed)); !st.ok()) {
        Q_EMIT message(QString::fromStdString(st.error().message));
        return;
      }
    }
  }
  run->setName(name);
}

void RunsPanel::renameRunInteractive(Run* run) {
  if (!run) return;
  if (isActive(run->status())) {
    Q_EMIT message(QStringLiteral("Rename %1 once it has finished (its summary is written at the end).").arg(run->name()));
    return;
  }
  bool ok = false;
  const QString name = QInputDialog::getText(this, QStringLiteral("Rename run"), QStringLiteral("Name"), QLineEdit::Normal,
                                             run->name(), &ok);
  if (ok) renameRun(run, name);
}

bool RunsPanel::deleteRun(Run* run, bool ask) {
  if (!run) return false;
  if (isActive(run->status())) {
    Q_EMIT message(QStringLiteral("Stop %1 before deleting it.").arg(run->name()));
    return false;
  }
  const QString dir = run->runDir();
  if (ask) {
    const QString what = dir.isEmpty() ? QStringLiteral("Remove %1 from the list?").arg(run->name())
                                       : QStringLiteral("Delete %1 and its folder?\n\n%2\n\nThis cannot be undone.").arg(run->name(), dir);
    if (QMessageBox::question(this, QStringLiteral("Delete run"), what, QMessageBox::Yes | QMessageBox::Cancel,
                              QMessageBox::Cancel) != QMessageBox::Yes)
      return false;
  }
  if (!dir.isEmpty() && QDir(dir).exists() && !QDir(dir).removeRecursively()) {
    Q_EMIT message(QStringLiteral("Could not delete every file in %1 (check its permissions).").arg(dir));
    return false;
  }
  model_->removeRun(run);
  return true;
}

void RunsPanel::setBaseline(Run* run) {
  model_->setBaseline(run);
  if (run) Q_EMIT message(QStringLiteral("%1 is the baseline: speedups are measured against it.").arg(run->name()));
}

void RunsPanel::openFolder(Run* run) {
  if (!run || run->runDir().isEmpty()) return;
  if (!QDesktopServices::openUrl(QUrl::fromLocalFile(run->runDir())))
    Q_EMIT message(QStringLiteral("No file manager answered; the folder is %1").arg(run->runDir()));
}

void RunsPanel::showContextMenu(const QPoint& pos) {
  Run* run = model_->runAt(view_->indexAt(pos).row());
  if (!run) return;
  QMenu menu(this);
  const bool shown = model_->isShown(run);
  menu.addAction(shown ? QStringLiteral("Hide from plots") : QStringLiteral("Show on plots"), this,
                 [this, run, shown] { model_->setShown(run, !shown); });
  QAction* base = menu.addAction(QStringLiteral("Set as baseline"), this, [this, run] { setBaseline(run); });
  base->setEnabled(model_->baseline() != run);
  menu.addSeparator();
  QAction* stop = menu.addAction(QStringLiteral("Stop"), this, [this, run] { stopRun(run); });
  stop->setEnabled(isActive(run->status()) || run->status() == RunStatus::Queued);
  menu.addAction(QStringLiteral("Rename…"), this, [this, run] { renameRunInteractive(run); })->setEnabled(!isActive(run->status()));
  menu.addAction(QStringLiteral("Open folder"), this, [this, run] { openFolder(run); })->setEnabled(!run->runDir().isEmpty());
  menu.addSeparator();
  menu.addAction(QStringLiteral("Delete…"), this, [this, run] { deleteRun(run); })->setEnabled(!isActive(run->status()));
  menu.exec(view_->viewport()->mapToGlobal(pos));
}

}  // namespace wb::ui
