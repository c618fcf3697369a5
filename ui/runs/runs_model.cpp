#include "runs/runs_model.h"

#include <QApplication>
#include <QDir>
#include <QFont>
#include <QIcon>
#include <QStyle>
#include <QLocale>

#include <map>

#include "wb/common/config.h"
#include "wb/proto/config_json.h"
#include "wb/compare/compare.h"
#include "runs/experiment_runs.h"
#include "wb/report/group_names.h"
#include "wb/report/run_names.h"

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

namespace {
bool pending(const Run* run) { return isActive(run->status()) || run->status() == RunStatus::Queued; }
}  // namespace

// What the comparison depends on: the baseline, and each ended run's status, evaluations read
// and summary (cheap to build; the comparison itself is not).
QString RunsModel::comparisonKey() const {
  if (!baseline_) return {};
  QString key = QString::number(quintptr(baseline_.data()), 16);
  for (const Run* run : runs_) {
    if (pending(run) || run->runDir().isEmpty()) continue;
    key += QStringLiteral("|%1:%2:%3:%4")
               .arg(quintptr(run), 0, 16)
               .arg(int(run->status()))
               .arg(run->evalSamples().size())
               .arg(run->trainSamplesPerSecond());
  }
  return key;
}

void RunsModel::updateComparison() const {
  if (!comparisonStale_) return;
  comparisonStale_ = false;
  comparisonKey_ = comparisonKey();
  comparison_.reset();
  comparisonRows_.clear();
  if (!baseline_ || baseline_->runDir().isEmpty()) return;
  std::vector<records::RunRecord> records;
  std::map<std::string, const Run*> byDir;
  for (const Run* run : runs_) {
    if (run == baseline_ || pending(run) || run->runDir().isEmpty()) continue;
    records.push_back(run->record());
    byDir[records.back().dir] = run;
  }
  const records::RunRecord base = baseline_->record();
  comparison_ = compare::compareRuns(base, records, std::nullopt, records::noiseOfRunHost(base), minEffect_);
  for (int i = 0; i < int(comparison_->rows.size()); ++i)
    if (auto it = byDir.find(comparison_->rows[size_t(i)].dir); it != byDir.end()) comparisonRows_.insert(it->second, i);
}

const compare::ComparisonRow* RunsModel::comparisonRow(const Run* run) const {
  if (!run || !baseline_ || run == baseline_ || pending(run)) return nullptr;
  updateComparison();
  if (!comparison_) return nullptr;
  const auto it = comparisonRows_.constFind(run);
  return it == comparisonRows_.constEnd() ? nullptr : &comparison_->rows[size_t(*it)];
}

QString RunsModel::noSpeedupReason(const Run* run) const {
  if (!run || !baseline_) return QStringLiteral("no baseline");
  if (pending(run)) return QStringLiteral("the run has not finished yet");
  if (run->status() == RunStatus::Incomplete) return QStringLiteral("the run ended without a summary");
  const compare::ComparisonRow* row = comparisonRow(run);
  if (!row) return QStringLiteral("the run is not in the comparison");
  return QString::fromStdString(row->noSpeedupReason());
}

// The estimate behind a speedup cell (null when the run gets none).
const stats::SpeedupEstimate* RunsModel::estimateFor(const Run* run, int col) const {
  const compare::ComparisonRow* row = comparisonRow(run);
  if (!row || !row->showsSpeedup()) return nullptr;
  const stats::SpeedupEstimate& e = col == ColSpeedupThroughput ? row->throughput : row->target;
  return std::isfinite(e.point) ? &e : nullptr;
}

double RunsModel::speedupVsBaseline(const Run* run) const {
  const stats::SpeedupEstimate* e = estimateFor(run, ColSpeedupThroughput);
  return e ? e->point : kNaN;
}

double RunsModel::speedupToTarget(const Run* run) const {
  const stats::SpeedupEstimate* e = estimateFor(run, ColSpeedupTarget);
  return e ? e->point : kNaN;
}

// ---- names ------------------------------------------------------------------------

namespace {
// "12:34:56" of an id that starts with its start time (YYYYMMDD-HHMMSS…); "" for other ids.
QString startTimeOf(const QString& id) {
  const auto digits = [&](int from, int n) {
    for (int i = from; i < from + n; ++i)
      if (!id.at(i).isDigit()) return false;
    return true;
  };
  if (id.size() >= 15 && digits(0, 8) && id.at(8) == QLatin1Char('-') && digits(9, 6))
    return id.mid(9, 2) + QLatin1Char(':') + id.mid(11, 2) + QLatin1Char(':') + id.mid(13, 2);
  return {};
}

bool isSeparator(QChar c) { return c == QLatin1Char('-') || c == QLatin1Char('_') || c == QLatin1Char('.') || c == QLatin1Char(' '); }

// The whole words of each id that the others lack: "p2" of "05-early-stopping-p2-baseline" beside
// "05-early-stopping-p1-baseline", "0008" of "exp-0008" beside "exp-0007"; an id alike in form to
// none of the others stays whole.
QStringList distinguishingParts(const QStringList& ids) {
  if (ids.size() < 2) return ids;
  int prefix = int(ids.front().size()), suffix = prefix;
  for (const QString& id : ids) {
    int p = 0;
    while (p < prefix && p < id.size() && id.at(p) == ids.front().at(p)) ++p;
    prefix = p;
    int s = 0;
    while (s < suffix && s < id.size() && id.at(id.size() - 1 - s) == ids.front().at(ids.front().size() - 1 - s)) ++s;
    suffix = s;
  }
  while (prefix > 0 && !isSeparator(ids.front().at(prefix - 1))) --prefix;  // whole words
  while (suffix > 0 && !isSeparator(ids.front().at(ids.front().size() - suffix))) --suffix;
  QStringList out;
  for (const QString& id : ids) {
    const QString part = id.mid(prefix, id.size() - prefix - suffix);
    out << (part.isEmpty() ? id : part);
  }
  return out;
}

// What tells apart runs that read alike: the start time of a timestamped folder, else what its
// folder's name has that the others' lack (the status for a run without a folder).
void tellApart(const QVector<const Run*>& group, QHash<const Run*, QString>* names) {
  QStringList ids;
  QVector<const Run*> untimed;
  for (const Run* run : group) {
    if (const QString time = startTimeOf(run->runId()); !time.isEmpty()) (*names)[run] += QStringLiteral(" · ") + time;
    else if (run->runId().isEmpty()) (*names)[run] += QStringLiteral(" · ") + statusWord(run->status());
    else untimed << run, ids << run->runId();
  }
  const QStringList parts = distinguishingParts(ids);
  for (int i = 0; i < untimed.size(); ++i) (*names)[untimed[i]] += QStringLiteral(" · ") + parts[i];
}

QString configName(const Run* run) { return QString::fromStdString(run->config().value("name", std::string())); }

// A name the user gave (Rename…) differs from the config's.
bool renamed(const Run* run) { return !configName(run).isEmpty() && run->name() != configName(run); }
}  // namespace

// The runs of one experiment (its folder's) are named against what they all share as well as the
// reference: what sets one trial or pair apart, not the shortened training they have in common.
QHash<const Run*, nlohmann::json> RunsModel::experimentReferences(const nlohmann::json& reference) const {
  QHash<QString, QVector<const Run*>> byExperiment;
  for (const Run* run : runs_) {
    if (run == baseline_ || run->config().empty()) continue;
    auto known = experimentOf_.constFind(run->runDir());
    if (known == experimentOf_.constEnd()) known = experimentOf_.insert(run->runDir(), experimentFolderOf(run->runDir()));
    if (!known->isEmpty()) byExperiment[*known] << run;
  }
  QHash<const Run*, nlohmann::json> references;
  for (const auto& group : byExperiment) {
    if (group.size() < 2) continue;
    std::vector<nlohmann::json> configs;
    for (const Run* run : group) configs.push_back(run->config());
    const nlohmann::json shared = report::sharedReference(configs, reference);
    for (const Run* run : group) references.insert(run, shared);
  }
  return references;
}

void RunsModel::updateNames() const {
  names_.clear();
  // Without a baseline, runs are named against the window's first experiment (every speedup off).
  const nlohmann::json reference =
      baseline_ && !baseline_->config().empty() ? baseline_->config() : proto::configToJson(speedupsOff(Config{}));
  const QHash<const Run*, nlohmann::json> inExperiments = experimentReferences(reference);
  QHash<QString, int> uses;
  for (const Run* run : runs_) {
    QString name = run->name();
    if (run != baseline_ && !renamed(run) && !run->config().empty()) {
      const QString diff = QString::fromStdString(report::differenceName(run->config(), inExperiments.value(run, reference)));
      if (!diff.isEmpty()) name = diff;
      else if (baseline_ && run->name() == baseline_->name()) name = QStringLiteral("same as baseline");
    }
    names_.insert(run, name);
    ++uses[name];
  }
  QHash<QString, QVector<const Run*>> alike;  // in the list's order
  for (const Run* run : runs_)
    if (uses.value(names_.value(run)) > 1 && run != baseline_) alike[names_.value(run)] << run;
  for (const auto& group : alike) tellApart(group, &names_);
  namesStale_ = false;
}

QString RunsModel::displayName(const Run* run) const {
  if (!run) return {};
  if (namesStale_) updateNames();
  return names_.value(run, run->name());
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
  if (isActive(run->status()) && !eta.isEmpty()) text += QStringLiteral(" · ") + eta;
  return text;
}

// The status word; a run its cluster job still holds says the job's state and id ("pending · job
// 12_3": Slurm's word, as squeue shows it).
QString statusText(const Run* run) {
  if (run->clusterJob().isEmpty() || isFinal(run->status())) return statusWord(run->status());
  const QString state = run->clusterState().toLower();
  return QStringLiteral("%1 · job %2").arg(state.isEmpty() ? statusWord(run->status()) : state, run->clusterJob());
}

}  // namespace

namespace {
// A speedup cell is narrow: the verdict and core's reason words in short (the tooltip has them
// whole, and the header says what each means).
QString shortVerdict(const stats::SpeedupEstimate& e) {
  switch (e.verdict) {
    case stats::Verdict::Faster: return QStringLiteral("faster");
    case stats::Verdict::Slower: return QStringLiteral("slower");
    case stats::Verdict::WithinNoise: return QStringLiteral("noise");
    case stats::Verdict::NoInterval: break;
  }
  return QStringLiteral("1 run");
}
QString shortWithheld(const std::string& word) {
  if (word == "not comparable") return QStringLiteral("other data");
  if (word == "repeat of baseline") return QStringLiteral("repeat");
  if (word == "baseline unfinished") return QStringLiteral("–");
  if (word == "host speed changed") return QStringLiteral("host changed");
  return QString::fromStdString(word);
}
}  // namespace

// A speedup cell: the multiplier and its verdict, "baseline", the word for why there is none
// ("contended", "failed", "not comparable", …), "not reached", or nothing while it runs.
QString RunsModel::speedupText(const Run* run, int col) const {
  if (run == baseline_) return QStringLiteral("baseline");
  if (!baseline_ || pending(run)) return {};
  if (run->status() == RunStatus::Incomplete) return statusWord(run->status());
  const compare::ComparisonRow* row = comparisonRow(run);
  if (!row) return QStringLiteral("–");
  if (const std::string word = row->withheldWord(); !word.empty()) return shortWithheld(word);
  if (const stats::SpeedupEstimate* e = estimateFor(run, col))
    return QString::fromStdString(wb::fmtSpeedup(e->point)) + QLatin1Char(' ') + shortVerdict(*e);
  if (col == ColSpeedupThroughput) return QStringLiteral("–");
  return run->evalSamples().empty() ? QString() : QStringLiteral("not reached");
}

QString RunsModel::speedupTip(const Run* run, int col) const {
  if (run == baseline_) return QStringLiteral("The baseline: speedups are measured against it.");
  const QString why = baseline_ ? noSpeedupReason(run) : QString();
  if (!why.isEmpty()) return QStringLiteral("No speedup: ") + why + QLatin1Char('.');
  QString tip = col == ColSpeedupThroughput
                    ? QStringLiteral("Train samples/s against the baseline's (training steps only: no evaluation, "
                                     "checkpoints or start-up).")
                    : QStringLiteral("The baseline's time to its best val acc (%1) over this run's time to reach it; all "
                                     "of each run's time counts. The Compare tab can set another target.")
                          .arg(std::isfinite(baseline_->bestValAcc())
                                   ? QLocale().toString(baseline_->bestValAcc() * 100.0, 'f', 2) + QStringLiteral(" %")
                                   : QStringLiteral("unknown"));
  if (const stats::SpeedupEstimate* e = estimateFor(run, col)) {
    tip += QStringLiteral("\n") + QString::fromStdString(stats::formatEstimate(*e));
    if (!e->method.empty()) tip += QStringLiteral(" (") + QString::fromStdString(e->method) + QLatin1Char(')');
    tip += QStringLiteral(".\nRepeats of one configuration are grouped; ") +
           QString::fromStdString(records::noiseMessage(comparison_->noise)) + QLatin1Char('.');
  }
  if (col == ColSpeedupTarget && run->evalSamples().empty()) tip += QStringLiteral("\nTick the run to read its evaluations.");
  return tip;
}

QVariant RunsModel::displayText(const Run* run, int col) const {
  const QLocale loc;
  switch (col) {
    case ColName: return displayName(run);
    case ColStatus: return statusText(run);
    case ColProgress: return progressText(run);
    case ColThroughput:
      return std::isfinite(run->trainSamplesPerSecond()) ? loc.toString(run->trainSamplesPerSecond(), 'f', 0) : QString();
    case ColBestAcc:
      return std::isfinite(run->bestValAcc()) ? loc.toString(run->bestValAcc() * 100.0, 'f', 2) + QStringLiteral(" %")
                                              : QString();
    case ColSpeedupThroughput:
    case ColSpeedupTarget: return speedupText(run, col);
  }
  return {};
}

QVariant RunsModel::toolTip(const Run* run, int col) const {
  const bool isBase = run == baseline_;
  if (col == ColName) {
    QString where = configName(run) + QLatin1Char('\n') + (run->runDir().isEmpty() ? run->name() : run->runDir());
    if (displayName(run) != run->name()) where.prepend(displayName(run) + QLatin1Char('\n'));
    if (run->contended()) where += QStringLiteral("\nMeasured under contention: ") + run->contentionNote() +
                                   QStringLiteral(". Its times and speedups are not trustworthy.");
    return isBase ? where + QStringLiteral("\n(the baseline: speedups are measured against it)") : where;
  }
  if (col == ColThroughput)
    return std::isfinite(run->trainSamplesPerSecond())
               ? QStringLiteral("Samples trained per second of training steps (no evaluation, checkpoints or set-up).")
               : QStringLiteral("Not known yet (older runs: tick the run to estimate it from its step events).");
  if (col == ColStatus && !run->clusterJob().isEmpty()) {
    QString tip = QStringLiteral("Slurm job %1: %2").arg(run->clusterJob(), run->clusterState());
    if (!run->clusterReason().isEmpty() && run->clusterReason() != QLatin1String("None"))
      tip += QStringLiteral(" (%1)").arg(run->clusterReason());
    return run->errorMessage().isEmpty() ? tip : run->errorMessage() + QLatin1Char('\n') + tip;
  }
  if (col == ColStatus && !run->errorMessage().isEmpty()) return run->errorMessage();
  if (col == ColStatus && isActive(run->status()) && !progressText(run).isEmpty())
    return QStringLiteral("%1 done (m:ss: the time it still needs, estimated from its steps so far)").arg(progressText(run));
  if (col == ColSpeedupThroughput || col == ColSpeedupTarget) return speedupTip(run, col);
  return {};
}

QVariant RunsModel::data(const QModelIndex& index, int role) const {
  Run* run = runAt(index.row());
  if (!run) return {};
  if (role == RunRole) return QVariant::fromValue(static_cast<QObject*>(run));
  const int col = index.column();
  const bool isBase = run == baseline_;
  switch (role) {
    case Qt::DisplayRole: return displayText(run, col);
    case Qt::ToolTipRole: return toolTip(run, col);
    case ProgressRole: return run->progress();
    case SortRole:
      switch (col) {
        case ColName: return displayName(run);
        case ColStatus: return int(run->status());
        case ColProgress: return run->progress();
        case ColThroughput: return run->trainSamplesPerSecond();
        case ColBestAcc: return run->bestValAcc();
        case ColSpeedupThroughput: return speedupVsBaseline(run);
        case ColSpeedupTarget: return speedupToTarget(run);
      }
      break;
    case Qt::DecorationRole:
      if (col == ColName && run->contended()) return contendedIcon();
      break;
    case Qt::CheckStateRole:
      if (col == ColName) return isShown(run) ? Qt::Checked : Qt::Unchecked;
      break;
    case Qt::FontRole:
      if (isBase && (col == ColName || col >= ColSpeedupThroughput)) {
        QFont f;
        f.setBold(true);  // (a verdict is said in words here; the Compare tab sets a clear one bold)
        return f;
      }
      break;
    case Qt::TextAlignmentRole:
      if (col >= ColThroughput) return int(Qt::AlignRight | Qt::AlignVCenter);
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

namespace {
const QString kVerdictsTip = QStringLiteral(
    "\nRepeats of one configuration are grouped. faster / slower: the 95 % interval excludes 1 and the effect "
    "is beyond the smallest effect that counts (Compare tab, 2 % by default); noise: it is not; 1 run: one run each, no interval. other data: the runs trained or validated on "
    "other data; repeat: the baseline's own configuration.");
}  // namespace

QString RunsModel::headerText(int section, bool compact) {
  switch (section) {
    case ColName: return QStringLiteral("Run");
    case ColStatus: return QStringLiteral("Status");
    case ColProgress: return QStringLiteral("Progress");
    case ColThroughput: return compact ? QStringLiteral("Samples/s") : QStringLiteral("Train samples/s");
    case ColBestAcc: return QStringLiteral("Best acc");
    case ColSpeedupThroughput: return QStringLiteral("× throughput");
    case ColSpeedupTarget: return QStringLiteral("× to target");
  }
  return {};
}

void RunsModel::setCompactHeaders(bool compact) {
  if (compact == compactHeaders_) return;
  compactHeaders_ = compact;
  Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::DisplayRole) return headerText(section, compactHeaders_);
  if (role != Qt::ToolTipRole) return {};
  switch (section) {
    case ColName:
      return QStringLiteral("Tick a run to draw it on the plots and compare it. A run is named by what it changed "
                            "against the baseline; hover a name for the experiment and its folder.");
    case ColThroughput: return QStringLiteral("Train samples/s: training steps only (no evaluation, checkpoints or start-up).");
    case ColBestAcc: return QStringLiteral("Best validation accuracy");
    case ColSpeedupThroughput:
      return QStringLiteral("Speedup of training throughput: the run's train samples/s over the baseline's. "
                            "Finished runs only.") + kVerdictsTip;
    case ColSpeedupTarget:
      return QStringLiteral("Speedup to the target: the baseline's time to its best val acc over the run's time to "
                            "reach it (what the Compare tab's chart shows). Finished runs only.") + kVerdictsTip;
  }
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
  namesStale_ = true;
  comparisonStale_ = true;
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
  names_.remove(run);
  namesStale_ = true;
  comparisonStale_ = true;
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
  namesStale_ = true;
  comparisonStale_ = true;
  if (!runs_.isEmpty()) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
  Q_EMIT baselineChanged(run);
}

void RunsModel::setMinEffect(double minEffect) {
  if (minEffect == minEffect_) return;
  minEffect_ = minEffect;
  comparisonStale_ = true;
  if (!runs_.isEmpty()) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

void RunsModel::onRunChanged(Run* run) {
  const int row = rowOf(run);
  if (row < 0) return;
  namesStale_ = true;  // a name or config may have changed
  // Every speedup depends on the baseline, and on the other repeats of each configuration.
  if (run == baseline_ || comparisonKey() != comparisonKey_) {
    comparisonStale_ = true;
    Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    return;
  }
  Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

}  // namespace wb::ui
