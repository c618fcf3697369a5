// The Compare tab's experiments: the ladder (run, stopped, opened from disk, its live plan and
// progress) and the experiment file and target that Run ladder and Find fastest share.
#include "compare/compare_view.h"

#include <algorithm>

#include <QApplication>
#include <QClipboard>
#include <QDateTime>
#include <QDir>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHash>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QScrollBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "compare/ladder_runner.h"
#include "compare/report_table.h"
#include "compare/tune_view.h"
#include "compare/speedup_chart.h"
#include "compare/whatif_view.h"
#include "runs/cli.h"
#include "runs/runs_model.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/probe/record.h"
#include "wb/report/export.h"

namespace wb::ui {

namespace {

constexpr int kDebounceMs = 500;  // runs emit changed() per event; recompute at most twice a second while shown

QString qs(const std::string& s) { return QString::fromStdString(s); }
std::string path8(const QString& p) { return QFile::encodeName(p).toStdString(); }

// The comparison's bars with each run's whole label (the chart elides it to its width).
wb::report::BarChartSpec comparisonBarsOf(const wb::report::Comparison& cmp) {
  wb::report::BarChartSpec spec = wb::report::comparisonBars(cmp);
  for (size_t i = 0; i < spec.bars.size() && i < cmp.rows.size(); ++i) spec.bars[i].label = cmp.rows[i].label;
  return spec;
}

}  // namespace

void CompareView::showLadder() {
  if (ladder_ && chartOnLadder_) chart_->setBars(wb::ladder::ladderBars(*ladder_));
  else chart_->setBars(comparison_ ? comparisonBarsOf(*comparison_) : wb::report::BarChartSpec{});
  if (ladderRunning_) showLivePlan();
  else if (ladder_) fillTable(ladderTable_, wb::ladder::ladderTable(*ladder_));
  else showLaddersOnDisk();
}

void CompareView::setRunsRoot(const QString& root) {
  runsRoot_ = root;
  tune_->setRunsRoot(root);
  if (!ladder_ && !ladderRunning_) showLaddersOnDisk();
}

QStringList CompareView::laddersOnDisk() const {
  if (runsRoot_.isEmpty()) return {};
  QFileInfoList found;
  const QDir root(runsRoot_);
  if (root.exists(QStringLiteral("ladder.json"))) found << QFileInfo(root.filePath(QStringLiteral("ladder.json")));
  for (const QString& sub : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
    if (QFileInfo f(root.filePath(sub + QStringLiteral("/ladder.json"))); f.isFile()) found << f;
  std::sort(found.begin(), found.end(), [](const QFileInfo& a, const QFileInfo& b) { return a.lastModified() > b.lastModified(); });
  QStringList dirs;
  for (const QFileInfo& f : found) dirs << f.absolutePath();
  return dirs;
}

QList<QPair<QString, QString>> CompareView::experimentsOnDisk() const {
  if (runsRoot_.isEmpty()) return {};
  static const QList<QPair<QString, QString>> kinds{{QStringLiteral("ladder.json"), QStringLiteral("ladder")},
                                                    {QStringLiteral("try.json"), QStringLiteral("try")},
                                                    {QStringLiteral("tune.json"), QStringLiteral("search")}};
  QList<QPair<QFileInfo, QString>> found;
  const QDir root(runsRoot_);
  for (const QString& sub : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
    for (const auto& [file, kind] : kinds)
      if (QFileInfo f(root.filePath(sub + QLatin1Char('/') + file)); f.isFile()) {
        found.append({f, kind});
        break;
      }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first.lastModified() > b.first.lastModified(); });
  QList<QPair<QString, QString>> out;
  for (const auto& [f, kind] : found) out.append({f.absolutePath(), kind});
  return out;
}

// No ladder open: the experiments under the runs root, newest first (double-click opens one: a
// ladder here, a try's or a search's runs as a group in the runs list, a search's answer on the
// Fastest tab too).
void CompareView::showLaddersOnDisk() {
  const auto found = experimentsOnDisk();
  ladderTable_->clear();
  ladderTable_->setColumnCount(3);
  ladderTable_->setHorizontalHeaderLabels({QStringLiteral("Experiments in the runs folder (double-click to open)"),
                                           QStringLiteral("Kind"), QStringLiteral("Written")});
  ladderTable_->setRowCount(found.isEmpty() ? 1 : int(found.size()));
  if (found.isEmpty()) {
    auto* hint = new QTableWidgetItem(QStringLiteral("None yet: Run ladder measures the baseline, then each speedup added in turn."));
    hint->setFlags(Qt::ItemIsEnabled);
    ladderTable_->setItem(0, 0, hint);
  }
  static const QHash<QString, QString> files{{QStringLiteral("ladder"), QStringLiteral("ladder.json")},
                                             {QStringLiteral("try"), QStringLiteral("try.json")},
                                             {QStringLiteral("search"), QStringLiteral("tune.json")}};
  for (int r = 0; r < int(found.size()); ++r) {
    const auto& [dir, kind] = found[r];
    auto* name = new QTableWidgetItem(QFileInfo(dir).fileName());
    name->setData(Qt::UserRole, dir);
    name->setData(Qt::UserRole + 1, kind);
    name->setToolTip(kind == QLatin1String("ladder") ? dir
                     : kind == QLatin1String("search")
                         ? dir + QStringLiteral("\nDouble-click: its answer on the Fastest tab, its runs in the runs list")
                         : dir + QStringLiteral("\nDouble-click: its runs in the runs list, its answer on the plots"));
    auto* kindItem = new QTableWidgetItem(kind);
    auto* when = new QTableWidgetItem(QFileInfo(QDir(dir).filePath(files.value(kind))).lastModified().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    int c = 0;
    for (auto* item : {name, kindItem, when}) {
      item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
      ladderTable_->setItem(r, c++, item);
    }
  }
  ladderTable_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  ladderTable_->resizeColumnToContents(1);
  ladderTable_->resizeColumnToContents(2);
}

// A running ladder: every step of its plan with where it stands (waiting, running, its status).
void CompareView::showLivePlan() {
  ladderTable_->clear();
  ladderTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  ladderTable_->setColumnCount(3);
  ladderTable_->setHorizontalHeaderLabels({QStringLiteral("Step"), QStringLiteral("Adds"), QStringLiteral("Status")});
  ladderTable_->setRowCount(int(livePlan_.size()));
  for (int r = 0; r < int(livePlan_.size()); ++r) {
    const auto& step = livePlan_[size_t(r)];
    const QString status = qs(wb::proto::stringOr(step, "status", {}));
    const QStringList cells{qs(wb::proto::stringOr(step, "key", {})), qs(wb::proto::stringOr(step, "added", {})), status};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
      item->setToolTip(cells[c]);
      if (status == QLatin1String("running")) {
        QFont bold = item->font();
        bold.setBold(true);
        item->setFont(bold);
      }
      ladderTable_->setItem(r, c, item);
    }
  }
  ladderTable_->resizeColumnsToContents();
}

void CompareView::setLadderTabText(const QString& text) { detailTabs_->setTabText(detailTabs_->indexOf(ladderTable_), text); }

void CompareView::onRungStarted(int index, int steps, const QString& key) {
  if (index >= 0 && index < int(livePlan_.size())) livePlan_[size_t(index)]["status"] = "running";
  // Steps done, never the running step's index: the runner revisits steps in rounds.
  setLadderTabText(QStringLiteral("Ladder %1/%2").arg(ladderRunner_->stepsDone()).arg(steps));
  summary_->setText(QStringLiteral("Ladder: %1; now %2 (step %3), its run in the list and on the plots.")
                        .arg(ladderRunner_->progressText(), key)
                        .arg(index + 1));
  showLivePlan();
}

// A step ended: its status in the plan, and the ladder so far (ladder.json is rewritten after
// each step) on the chart.
void CompareView::onRungEnded(int index, const QString& status) {
  if (index >= 0 && index < int(livePlan_.size())) livePlan_[size_t(index)]["status"] = status.toStdString();
  const QString out = ladderRunner_->outDir();
  if (!out.isEmpty() && QFileInfo::exists(QDir(out).filePath(QStringLiteral("ladder.json"))))
    if (auto partial = wb::ladder::loadLadder(path8(out)); partial.ok()) {
      ladder_ = std::move(partial.value());
      ladderDir_ = out;
      chartOnLadder_ = true;
    }
  showLadder();
}

bool CompareView::openLadder(const QString& dirOrFile, QString* error) {
  auto ladder = wb::ladder::loadLadder(path8(dirOrFile));
  if (!ladder.ok()) {
    if (error) *error = qs(ladder.error().message);
    return false;
  }
  ladder_ = std::move(ladder.value());
  ladderDir_ = QFileInfo(dirOrFile).isDir() ? dirOrFile : QFileInfo(dirOrFile).absolutePath();
  chartOnLadder_ = true;
  detailTabs_->setCurrentWidget(ladderTable_);
  refreshNow();
  return true;
}

// The experiment a ladder or a search starts from: the source's when it names one (or why not),
// else the baseline's config.json.
QString CompareView::experimentFile(QString* why) const {
  if (experimentSource_)
    if (const QString file = experimentSource_(why); !file.isEmpty() || !why->isEmpty()) return file;
  Run* base = model_->baseline();
  if (base && !base->runDir().isEmpty()) return QString::fromStdString(wb::proto::RunDir{path8(base->runDir())}.config().string());
  *why = QStringLiteral("Set a baseline first: the ladder and Find fastest start from the baseline's experiment.");
  return QString();
}

QStringList CompareView::targetArguments() const {
  if (target_->value() <= 0) return {};  // auto: each command's own default
  return {QStringLiteral("--target-acc"), QString::number(target_->value() / 100.0, 'g', 10)};
}

void CompareView::runLadder() {
  QString why;
  const QString config = experimentFile(&why);
  if (config.isEmpty()) {
    QMessageBox::information(this, QStringLiteral("Run ladder"),
                             why + QStringLiteral(" The ladder runs it with every speedup off, then adds them one at a time."));
    return;
  }
  QStringList args{QStringLiteral("--config"), config};
  // The set-up's lr scaling rule when it has one; "none" lets the ladder pick by the optimiser
  // (linear for SGD, sqrt for Adam), so its devices step compares at equal accuracy.
  if (const QString rule = ladderLrScaling_ ? ladderLrScaling_() : QString(); !rule.isEmpty() && rule != QLatin1String("none"))
    args << QStringLiteral("--lr-scaling") << rule;
  args << QStringLiteral("--min-effect") << QString::number(minEffect_->value() / 100.0);  // the verdicts' threshold, as here
  args << targetArguments();
  // A ladder cut short on the same experiment and options is continued, as the CLI does with its
  // folder; else a new one, into the runs folder the window shows (listed there after a restart).
  const CutExperiment asked{QString(), args.mid(2), readAll(config)};  // the config by its content, not its path
  const bool continuing = cutLadder_.continues(asked);
  const QString out = continuing ? cutLadder_.dir
                      : runsRoot_.isEmpty()
                          ? QString()
                          : QDir(runsRoot_).filePath(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")) + QStringLiteral("-ladder"));
  cutLadder_ = asked;
  cutLadder_.dir = out;
  if (!out.isEmpty()) args << QStringLiteral("--out") << out;
  ladderRunning_ = true;
  livePlan_ = nlohmann::json::array();
  ladderRunner_->start(locateCli(), args);
  ladderButton_->setEnabled(false);
  stopLadderButton_->setEnabled(true);
  ladderButton_->hide();
  stopLadderButton_->show();
  summary_->setText(continuing ? QStringLiteral("Ladder: continuing the one cut short in %1 (its finished pairs are kept)…").arg(out)
                               : QStringLiteral("Ladder: starting…"));
}

void CompareView::onLadderFinished(const QString& outDir, bool cancelled, const QString& error) {
  ladderRunning_ = false;
  if (!cancelled || outDir.isEmpty()) cutLadder_ = {};  // only a cut ladder is continued
  else cutLadder_.dir = outDir;
  setLadderTabText(QStringLiteral("Ladder"));
  ladderButton_->setEnabled(true);
  stopLadderButton_->setEnabled(false);
  stopLadderButton_->hide();
  ladderButton_->show();
  QString loadError;
  const bool opened = !outDir.isEmpty() && QFileInfo::exists(QDir(outDir).filePath(QStringLiteral("ladder.json"))) &&
                      openLadder(outDir, &loadError);
  QString text = cancelled ? QStringLiteral("Ladder cancelled; the steps that finished are shown. Run ladder on the same "
                                           "experiment continues it.")
                 : error.isEmpty() ? QStringLiteral("Ladder finished: %1").arg(outDir)
                                   : error;
  if (!opened && !loadError.isEmpty()) text += QStringLiteral("\n") + loadError;
  summary_->setText(text);
}

}  // namespace wb::ui
