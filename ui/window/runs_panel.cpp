#include "window/runs_panel.h"

#include <QApplication>
#include <QDesktopServices>
#include <QDir>
#include <QEvent>
#include <QFile>
#include <QFileInfo>
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

constexpr int kSideBySideWidth = 820;  // px: below it the details pane goes under the list
constexpr int kNameRoom = 170;         // px a name needs to read ("8192 train…batch 64"); less: compact figures

// Status column: the status word, and for a run under way a bar with "45 % · 1:23" on it (the
// model's Progress column, folded in: one column fewer keeps every figure in view at 1024 px).
class StatusDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
    const QModelIndex progress = index.siblingAtColumn(RunsModel::ColProgress);
    const double p = progress.data(RunsModel::ProgressRole).toDouble();
    auto* run = qobject_cast<Run*>(index.data(RunsModel::RunRole).value<QObject*>());
    if (!run || !isActive(run->status()) || !std::isfinite(p)) {
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
    bar.text = progress.data(Qt::DisplayRole).toString();
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
  auto* split = split_ = new QSplitter(Qt::Horizontal, this);
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
  view_->setItemDelegateForColumn(RunsModel::ColStatus, new StatusDelegate(view_));
  view_->setColumnHidden(RunsModel::ColProgress, true);
  view_->setWordWrap(false);
  view_->setTextElideMode(Qt::ElideMiddle);  // ladder runs share a name and differ at the end
  sizeColumns();

  details_ = new QPlainTextEdit(split);
  details_->setObjectName(QStringLiteral("runDetails"));
  details_->setReadOnly(true);
  details_->setPlaceholderText(QStringLiteral("Select a run to see its folder, error and log tail."));
  details_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  // The list needs the width (names, then the figures); the details take what is left.
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);
  split->setSizes({800, 200});
  split->setChildrenCollapsible(false);
  details_->setMinimumSize(140, 40);

  connect(view_, &QWidget::customContextMenuRequested, this, &RunsPanel::showContextMenu);
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this] {
    updateDetails();
    Q_EMIT currentRunChanged(currentRun());
  });
  connect(model_, &QAbstractItemModel::dataChanged, this, [this](const QModelIndex& a, const QModelIndex& b) {
    const int row = view_->currentIndex().row();
    if (row >= a.row() && row <= b.row()) updateDetails();
    fitClusterStatus(a.row(), b.row());
  });
  connect(model_, &QAbstractItemModel::rowsInserted, this, [this](const QModelIndex&, int first, int last) { fitClusterStatus(first, last); });
}

// A run a cluster job holds says its job in the Status column ("pending · job 12_3"): the
// column grows to show it whole (never shrinks under the user).
void RunsPanel::fitClusterStatus(int first, int last) {
  QHeaderView* h = view_->horizontalHeader();
  for (int row = std::max(0, first); row <= last && row < model_->rowCount(); ++row) {
    const Run* run = model_->runAt(row);
    if (!run || run->clusterJob().isEmpty()) continue;
    const QString text = model_->data(model_->index(row, RunsModel::ColStatus), Qt::DisplayRole).toString();
    const int need = view_->fontMetrics().horizontalAdvance(text) + 16;
    if (need > h->sectionSize(RunsModel::ColStatus)) h->resizeSection(RunsModel::ColStatus, need);
  }
}

// The name takes the room the figures leave; each figure column is as wide as its header or its
// widest usual value, so all of them stay in view at 1024 px and names are elided in the middle
// (the full name is the tooltip). Where the headers would leave a name less than kNameRoom, the
// figure columns take their values' width under short headers (each header's tooltip says it whole).
// Narrow (a 1024 px screen): the details go under the list, which keeps the whole width.
void RunsPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  const Qt::Orientation want = width() < kSideBySideWidth ? Qt::Vertical : Qt::Horizontal;
  if (split_->orientation() == want) return;
  split_->setOrientation(want);
  split_->setSizes(want == Qt::Vertical ? QList<int>{3 * height() / 4, height() / 4} : QList<int>{4 * width() / 5, width() / 5});
}

void RunsPanel::sizeColumns() {
  QHeaderView* h = view_->horizontalHeader();
  h->setSectionResizeMode(QHeaderView::Interactive);
  h->setSectionResizeMode(RunsModel::ColName, QHeaderView::Stretch);
  h->setStretchLastSection(false);
  h->setMinimumSectionSize(36);
  view_->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  view_->viewport()->installEventFilter(this);
  fitFigureColumns();
}

namespace {

// The figure columns and their widest usual value.
const std::pair<int, const char*> kFigures[] = {
    {RunsModel::ColStatus, "99 % · 10:00"},  // a running run: never 100 % with time to go
    {RunsModel::ColThroughput, "12,345"},
    {RunsModel::ColBestAcc, "100.00 %"},     // a run that learns it all
    {RunsModel::ColSpeedupThroughput, "1.85× faster"},
    {RunsModel::ColSpeedupTarget, "1.85× faster"},
};

}  // namespace

// Sizes the figure columns for the list's width: their headers whole, or (where that leaves a name
// less than kNameRoom) their values and short headers whole ("Samples/s"). Only when that choice
// changes, so a column the user widened stays.
void RunsPanel::fitFigureColumns() {
  const QFontMetrics fm = view_->fontMetrics();
  const auto widthOf = [&](int column, const char* widest, bool compact) {
    return std::max(fm.horizontalAdvance(QString::fromUtf8(widest)),
                    fm.horizontalAdvance(RunsModel::headerText(column, compact))) + (compact ? 8 : 12);
  };
  int whole = 0;
  for (const auto& [column, widest] : kFigures) whole += widthOf(column, widest, false);
  const int room = view_->viewport()->width();
  const bool compact = room > 0 && room - whole < kNameRoom;
  if (sized_ && compact == compact_) return;
  sized_ = true, compact_ = compact;
  model_->setCompactHeaders(compact);
  for (const auto& [column, widest] : kFigures) view_->horizontalHeader()->resizeSection(column, widthOf(column, widest, compact));
  fitClusterStatus(0, model_->rowCount() - 1);
}

bool RunsPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == view_->viewport() && event->type() == QEvent::Resize) fitFigureColumns();
  return QWidget::eventFilter(watched, event);
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
  out << model_->displayName(run) + QStringLiteral(" — ") + statusWord(run->status());
  // What ended it comes right under its name: the pane shows three lines before it scrolls.
  // A stopped run has no error: what ended it, in words.
  const bool stopped = run->status() == RunStatus::Cancelled;
  if (!run->errorMessage().isEmpty())
    out << (stopped ? QStringLiteral("Cancelled: ") : QStringLiteral("Error: ")) + run->errorMessage();
  if (model_->displayName(run) != run->name()) out << QStringLiteral("Experiment: ") + run->name();
  if (!run->runDir().isEmpty()) out << run->runDir();
  if (stopped)
    out << QStringLiteral("It gets no speedup (it did not finish); its folder keeps what it wrote, and "
                          "`workbench-cli run --resume` continues it from checkpoints/last.pt.");
  QString tail = run->logTail();
  if (tail.isEmpty() && run->status() == RunStatus::Failed && !run->runDir().isEmpty())
    tail = readTail(QString::fromStdString(proto::RunDir{run->runDir().toStdString()}.rankLog(0).string()), 30);
  // The warnings before the log tail: they are few lines and say what the run noticed; the tail scrolls.
  if (!run->warnings().isEmpty()) out << QString() << QStringLiteral("Warnings:") << run->warnings();
  if (!tail.isEmpty()) out << QString() << QStringLiteral("Log tail:") << tail;
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

void RunsPanel::showOnly(Run* run) {
  for (Run* r : model_->runs()) model_->setShown(r, r == run || r == model_->baseline());
}

void RunsPanel::hideAll() {
  for (Run* r : model_->runs()) model_->setShown(r, false);
}

QString RunsPanel::experimentOf(const Run* run) const {
  const QString root = QDir(queue_->runsRoot()).absolutePath();
  if (!run || run->runDir().isEmpty() || queue_->runsRoot().isEmpty()) return {};
  const QString rel = QDir(root).relativeFilePath(QDir(run->runDir()).absolutePath());
  const int slash = rel.indexOf(QLatin1Char('/'));
  if (rel.startsWith(QLatin1String("..")) || slash < 0) return {};
  return QDir(root).filePath(rel.left(slash));
}

void RunsPanel::showExperimentOf(Run* run) {
  const QString exp = experimentOf(run);
  if (exp.isEmpty()) return;
  for (Run* r : model_->runs())
    if (experimentOf(r) == exp) model_->setShown(r, true);
}

void RunsPanel::showContextMenu(const QPoint& pos) {
  Run* run = model_->runAt(view_->indexAt(pos).row());
  if (!run) return;
  QMenu menu(this);
  const bool shown = model_->isShown(run);
  menu.addAction(shown ? QStringLiteral("Hide from plots") : QStringLiteral("Show on plots"), this,
                 [this, run, shown] { model_->setShown(run, !shown); });
  menu.addAction(QStringLiteral("Show only this run (and the baseline)"), this, [this, run] { showOnly(run); });
  if (const QString exp = experimentOf(run); !exp.isEmpty())
    menu.addAction(QStringLiteral("Show all runs of %1").arg(QFileInfo(exp).fileName()), this, [this, run] { showExperimentOf(run); });
  menu.addAction(QStringLiteral("Hide all from plots"), this, [this] { hideAll(); })->setEnabled(!model_->shownRuns().isEmpty());
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
