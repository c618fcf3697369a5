#include "runs/runs_model.h"

#include <QApplication>
#include <QDir>
#include <QFont>
#include <QIcon>
#include <QStyle>
#include <QLocale>

namespace wb::ui {

RunsModel::RunsModel(QObject* parent) : QAbstractTableModel(parent) {}

int RunsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(runs_.size()); }
int RunsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString RunsModel::formatEta(double s) {
  if (!std::isfinite(s) || s < 0) return {};
  const qint64 total = qint64(s + 0.5);
  const qint64 h = total / 3600, m = (total % 3600) / 60, sec = total % 60;
  if (h > 0) return QStringLiteral("%1:%2:%3").arg(h).arg(m, 2, 10, QLatin1Char('0')).arg(sec, 2, 10, QLatin1Char('0'));
  return QStringLiteral("%1:%2").arg(m).arg(sec, 2, 10, QLatin1Char('0'));
}

QString RunsModel::contentionVsBaseline(const Run* run) const {
  if (!run) return {};
  QString note = run->contentionNote();
  if (baseline_ && baseline_ != run && baseline_->contended())
    note += (note.isEmpty() ? QString() : QStringLiteral("; ")) + QStringLiteral("the baseline: ") + baseline_->contentionNote();
  return note;
}

double RunsModel::speedupVsBaseline(const Run* run) const {
  if (!baseline_ || !run || !contentionVsBaseline(run).isEmpty()) return kNaN;
  const double b = baseline_->trainSamplesPerSecond(), r = run->trainSamplesPerSecond();
  if (!(b > 0) || !(r > 0)) return kNaN;
  return r / b;
}

namespace {
QIcon contendedIcon() {
  if (!qobject_cast<QApplication*>(QCoreApplication::instance())) return {};  // no style without widgets
  return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
}

QString progressText(const Run* run) {
  const double p = run->progress();
  if (!std::isfinite(p)) return isActive(run->status()) ? QStringLiteral("starting…") : QString();
  QString text = QStringLiteral("%1 %").arg(int(p * 100.0 + 0.5));
  const QString eta = RunsModel::formatEta(run->etaSeconds());
  if (isActive(run->status()) && !eta.isEmpty()) text += QStringLiteral(" · ETA ") + eta;
  return text;
}
}  // namespace

QVariant RunsModel::data(const QModelIndex& index, int role) const {
  Run* run = runAt(index.row());
  if (!run) return {};
  if (role == RunRole) return QVariant::fromValue(static_cast<QObject*>(run));
  const int col = index.column();
  const bool isBase = run == baseline_;
  const QLocale loc;
  switch (role) {
    case Qt::DisplayRole:
      switch (col) {
        case ColName: return run->name();
        case ColStatus: return statusWord(run->status());
        case ColProgress: return progressText(run);
        case ColThroughput:
          return std::isfinite(run->trainSamplesPerSecond()) ? loc.toString(run->trainSamplesPerSecond(), 'f', 0) : QString();
        case ColBestAcc:
          return std::isfinite(run->bestValAcc()) ? loc.toString(run->bestValAcc() * 100.0, 'f', 2) + QStringLiteral(" %")
                                                  : QString();
        case ColSpeedup: {
          if (isBase) return QStringLiteral("baseline");
          if (baseline_ && !contentionVsBaseline(run).isEmpty()) return QStringLiteral("contended");
          const double s = speedupVsBaseline(run);
          return std::isfinite(s) ? loc.toString(s, 'f', 2) + QStringLiteral("×") : QString();
        }
      }
      break;
    case ProgressRole: return run->progress();
    case SortRole:
      switch (col) {
        case ColName: return run->name();
        case ColStatus: return int(run->status());
        case ColProgress: return run->progress();
        case ColThroughput: return run->trainSamplesPerSecond();
        case ColBestAcc: return run->bestValAcc();
        case ColSpeedup: return speedupVsBaseline(run);
      }
      break;
    case Qt::DecorationRole:
      if (col == ColName && run->contended()) return contendedIcon();
      break;
    case Qt::CheckStateRole:
      if (col == ColName) return isShown(run) ? Qt::Checked : Qt::Unchecked;
      break;
    case Qt::FontRole:
      if (isBase && (col == ColName || col == ColSpeedup)) {
        QFont f;
        f.setBold(true);
        return f;
      }
      break;
    case Qt::TextAlignmentRole:
      if (col >= ColThroughput) return int(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case Qt::ToolTipRole:
      if (col == ColName) {
        QString where = run->runDir().isEmpty() ? run->name() : run->runDir();
        if (run->contended()) where += QStringLiteral("\nMeasured under contention: ") + run->contentionNote() +
                                       QStringLiteral(". Its times and speedups are not trustworthy.");
        return isBase ? where + QStringLiteral("\n(the baseline: speedups are measured against it)") : where;
      }
      if (col == ColThroughput)
        return std::isfinite(run->trainSamplesPerSecond())
                   ? QStringLiteral("Samples trained per second of training steps (no evaluation, checkpoints or set-up).")
                   : QStringLiteral("Not known yet (older runs: tick the run to estimate it from its step events).");
      if (col == ColStatus && !run->errorMessage().isEmpty()) return run->errorMessage();
      if (col == ColSpeedup) {
        const QString why = baseline_ && !isBase ? contentionVsBaseline(run) : QString();
        if (!why.isEmpty()) return QStringLiteral("No speedup: measured under contention (") + why + QStringLiteral(").");
        return QStringLiteral("Train samples/s against the baseline's. Time to the target accuracy is on the Compare tab.");
      }
      break;
  }
  return {};
}

bool RunsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  Run* run = runAt(index.row());
  if (!run || index.column() != ColName || role != Qt::CheckStateRole) return false;
  setShown(run, value.toInt() == Qt::Checked);
  return true;
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::DisplayRole) {
    switch (section) {
      case ColName: return QStringLiteral("Run");
      case ColStatus: return QStringLiteral("Status");
      case ColProgress: return QStringLiteral("Progress");
      case ColThroughput: return QStringLiteral("Train samples/s");
      case ColBestAcc: return QStringLiteral("Best val acc");
      case ColSpeedup: return QStringLiteral("Speedup");
    }
  }
  if (role == Qt::ToolTipRole && section == ColName) return QStringLiteral("Tick a run to draw it on the plots and compare it.");
  return {};
}

Qt::ItemFlags RunsModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.column() == ColName) f |= Qt::ItemIsUserCheckable;
  return f;
}

void RunsModel::addRun(Run* run, bool atTop) {
  const int row = atTop ? 0 : int(runs_.size());
  beginInsertRows({}, row, row);
  run->setParent(this);
  runs_.insert(row, run);
  endInsertRows();
  connect(run, &Run::changed, this, [this, run] { onRunChanged(run); });
  Q_EMIT runAdded(run);
}

void RunsModel::removeRun(Run* run) {
  const int row = rowOf(run);
  if (row < 0) return;
  Q_EMIT runAboutToBeRemoved(run);
  if (shown_.removeAll(run) > 0) Q_EMIT shownChanged(run, false);
  if (baseline_ == run) setBaseline(nullptr);
  beginRemoveRows({}, row, row);
  runs_.removeAt(row);
  endRemoveRows();
  run->disconnect(this);
  run->deleteLater();
}

Run* RunsModel::runAt(int row) const { return (row >= 0 && row < runs_.size()) ? runs_[row] : nullptr; }
int RunsModel::rowOf(const Run* run) const { return int(runs_.indexOf(const_cast<Run*>(run))); }

Run* RunsModel::findByDir(const QString& runDir) const {
  if (runDir.isEmpty()) return nullptr;
  const QString want = QDir::cleanPath(QDir(runDir).absolutePath());
  for (Run* r : runs_)
    if (!r->runDir().isEmpty() && QDir::cleanPath(QDir(r->runDir()).absolutePath()) == want) return r;
  return nullptr;
}

bool RunsModel::isShown(const Run* run) const { return shown_.contains(const_cast<Run*>(run)); }

void RunsModel::setShown(Run* run, bool shown) {
  if (rowOf(run) < 0 || isShown(run) == shown) return;
  if (shown) {
    run->ensureEventsLoaded();
    shown_.append(run);
  } else {
    shown_.removeAll(run);
  }
  const QModelIndex idx = index(rowOf(run), ColName);
  Q_EMIT dataChanged(idx, idx, {Qt::CheckStateRole});
  Q_EMIT shownChanged(run, shown);
}

QVector<Run*> RunsModel::shownRuns() const { return shown_; }

void RunsModel::setBaseline(Run* run) {
  if (run == baseline_) return;
  if (run) run->ensureEventsLoaded();
  baseline_ = run;
  if (!runs_.isEmpty()) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
  Q_EMIT baselineChanged(run);
}

void RunsModel::onRunChanged(Run* run) {
  const int row = rowOf(run);
  if (row < 0) return;
  if (run == baseline_) {  // every speedup depends on it
    Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    return;
  }
  Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

}  // namespace wb::ui
