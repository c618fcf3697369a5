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

// Verdict colours readable on `palette`'s base: the text colour for info, and a red / blue that
// are darker on a light base and lighter on a dark one.
QString adviceHtml(const std::vector<wb::report::AdviceBlock>& blocks, const QPalette& palette) {
  const bool dark = palette.color(QPalette::Base).lightness() < 128;
  const QString info = palette.color(QPalette::Text).name();
  const QString warning = QLatin1String(dark ? "#ff8a80" : "#a33");
  const QString tip = QLatin1String(dark ? "#7cb8ff" : "#1a5c9e");
  QString html;
  for (const auto& b : blocks) {
    html += QStringLiteral("<h4>%1</h4><ul>").arg(qs(b.run).toHtmlEscaped());
    if (b.verdicts.empty()) html += QStringLiteral("<li>nothing to flag</li>");
    for (const auto& v : b.verdicts) {
      const QString& colour = v.severity == wb::report::Severity::Warning ? warning
                              : v.severity == wb::report::Severity::Tip   ? tip
                                                                          : info;
      html += QStringLiteral("<li style=\"color:%1\"><b>%2:</b> %3</li>")
                  .arg(colour, QLatin1String(wb::report::severityName(v.severity)), qs(v.text).toHtmlEscaped());
    }
    html += QStringLiteral("</ul>");
  }
  return html;
}

// The comparison's bars with each run's whole label (the chart elides it to its width).
wb::report::BarChartSpec comparisonBarsOf(const wb::report::Comparison& cmp) {
  wb::report::BarChartSpec spec = wb::report::comparisonBars(cmp);
  for (size_t i = 0; i < spec.bars.size() && i < cmp.rows.size(); ++i) spec.bars[i].label = cmp.rows[i].label;
  return spec;
}

}  // namespace

CompareView::CompareView(RunsModel* model, QWidget* parent)
    : QWidget(parent), model_(model), ladderRunner_(new LadderRunner(this)) {
  auto* layout = new QVBoxLayout(this);

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(QStringLiteral("Target:"), this));
  target_ = new QDoubleSpinBox(this);
  target_->setObjectName(QStringLiteral("compareTarget"));
  target_->setRange(0, 100);
  target_->setDecimals(2);
  target_->setSuffix(QStringLiteral(" %"));
  target_->setSpecialValueText(QStringLiteral("auto"));
  target_->setToolTip(QStringLiteral("Time to target is measured to this validation accuracy. auto: the baseline's best less "
                                     "how much a best accuracy moves by chance (the summary below says which)"));
  controls->addWidget(target_);
  controls->addWidget(new QLabel(QStringLiteral("Effect ≥"), this));
  minEffect_ = new QDoubleSpinBox(this);
  minEffect_->setObjectName(QStringLiteral("compareMinEffect"));
  minEffect_->setRange(0, 50);
  minEffect_->setDecimals(0);  // whole per cent: the row fits a 1024 px window
  minEffect_->setSuffix(QStringLiteral(" %"));
  minEffect_->setValue(wb::report::kDefaultMinEffect * 100);
  minEffect_->setToolTip(QStringLiteral("A speedup is called faster or slower only when its interval excludes 1 and it is "
                                        "at least this large; smaller effects read \"within noise\" however sure"));
  controls->addWidget(minEffect_);
  controls->addStretch(1);
  ladderButton_ = new QPushButton(QStringLiteral("Run ladder"), this);
  ladderButton_->setToolTip(QStringLiteral("Run the baseline's experiment with every speedup off, then add them one at a time"));
  stopLadderButton_ = new QPushButton(QStringLiteral("Stop ladder"), this);
  stopLadderButton_->setEnabled(false);
  stopLadderButton_->hide();  // in Run ladder's place while one runs: the row fits a 1024 px window
  auto* openLadderButton = new QPushButton(QStringLiteral("Open ladder…"), this);
  exportButton_ = new QPushButton(QStringLiteral("Export…"), this);
  for (auto* b : {ladderButton_, stopLadderButton_, openLadderButton, exportButton_}) controls->addWidget(b);
  layout->addLayout(controls);

  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("compareSummary"));
  summary_->setWordWrap(true);
  // Three lines kept whatever it says: the tabs under it do not jump as a ladder's lines come and go.
  summary_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  summary_->setMinimumHeight(3 * summary_->fontMetrics().lineSpacing() + 4);
  layout->addWidget(summary_);

  // The table over one set of tabs: the chart first, with the whole width (beside another
  // tab it was squeezed to a sliver), then the advisor, the ladder and the what-if.
  auto* split = new QSplitter(Qt::Vertical, this);
  table_ = new QTableWidget(this);
  table_->setObjectName(QStringLiteral("compareTable"));
  table_->setContextMenuPolicy(Qt::CustomContextMenu);
  table_->verticalHeader()->setVisible(false);
  table_->setWordWrap(false);  // one line a run: more rows in view (each cell's tooltip has it all)
  table_->setTextElideMode(Qt::ElideMiddle);  // runs that share a start differ at the end
  split->addWidget(table_);
  detailTabs_ = new QTabWidget(split);
  detailTabs_->setObjectName(QStringLiteral("compareTabs"));
  chart_ = new SpeedupChart(detailTabs_);
  advice_ = new QTextBrowser(detailTabs_);
  advice_->setObjectName(QStringLiteral("compareAdvice"));
  ladderTable_ = new QTableWidget(detailTabs_);
  ladderTable_->setObjectName(QStringLiteral("ladderTable"));
  ladderTable_->verticalHeader()->setVisible(false);
  detailTabs_->addTab(chart_, QStringLiteral("Chart"));
  detailTabs_->addTab(advice_, QStringLiteral("Advisor"));
  detailTabs_->addTab(ladderTable_, QStringLiteral("Ladder"));
  whatIf_ = new WhatIfView(detailTabs_);
  detailTabs_->addTab(whatIf_, QStringLiteral("Early-stopping what-if"));
  tune_ = new TuneView(detailTabs_);
  detailTabs_->addTab(tune_, QStringLiteral("Fastest"));
  tune_->setConfigSource([this](QString* why) { return experimentFile(why); });  // as Run ladder's
  tune_->setTargetSource([this] { return targetArguments(); });
  split->addWidget(detailTabs_);
  split->setChildrenCollapsible(false);
  // Three rows in view at least, under the header (a 1024x700 window left it two).
  table_->setMinimumHeight(table_->horizontalHeader()->sizeHint().height() + table_->verticalHeader()->defaultSectionSize() * 3 +
                           2 * table_->frameWidth() + table_->horizontalScrollBar()->sizeHint().height());
  split->setStretchFactor(0, 1);  // the table and the chart share the height
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);

  debounce_.setSingleShot(true);
  debounce_.setInterval(kDebounceMs);
  connect(&debounce_, &QTimer::timeout, this, [this] {
    if (isVisible()) refreshNow();
    else dirty_ = true;
  });
  connect(target_, &QDoubleSpinBox::valueChanged, this, [this] { scheduleRefresh(); });
  connect(minEffect_, &QDoubleSpinBox::valueChanged, this, [this](double percent) {
    model_->setMinEffect(percent / 100.0);
    scheduleRefresh();
  });
  connect(exportButton_, &QPushButton::clicked, this, &CompareView::exportDialog);
  connect(ladderButton_, &QPushButton::clicked, this, &CompareView::runLadder);
  connect(stopLadderButton_, &QPushButton::clicked, ladderRunner_, &LadderRunner::cancel);
  connect(openLadderButton, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, QStringLiteral("Open a ladder folder (written by workbench-cli ladder)"),
                                                          runsRoot_);
    if (dir.isEmpty()) return;
    QString error;
    if (!openLadder(dir, &error)) QMessageBox::warning(this, QStringLiteral("Open ladder"), error);
  });
  connect(table_, &QTableWidget::customContextMenuRequested, this, &CompareView::tableMenu);
  connect(ladderRunner_, &LadderRunner::progress, this, [this](const QString& line) {
    summary_->setText(QStringLiteral("Ladder (%1): %2").arg(ladderRunner_->progressText(), line));
    // The tab counts what the header counts, at the same moment.
    if (ladderRunner_->stepsPlanned() > 0)
      setLadderTabText(QStringLiteral("Ladder %1/%2").arg(ladderRunner_->stepsDone()).arg(ladderRunner_->stepsPlanned()));
  });
  connect(ladderRunner_, &LadderRunner::finished, this, &CompareView::onLadderFinished);
  connect(ladderRunner_, &LadderRunner::planned, this, [this] {
    livePlan_ = ladderRunner_->plan();
    for (auto& step : livePlan_) {
      const bool skipped = wb::proto::boolOr(step, "skipped", false);
      step["status"] = skipped ? "skipped: " + wb::proto::stringOr(step, "note", "not available here") : std::string("waiting");
    }
    detailTabs_->setCurrentWidget(ladderTable_);
    showLivePlan();
  });
  connect(ladderRunner_, &LadderRunner::rungStarted, this,
          [this](int index, int steps, const QString& key, const QString&) { onRungStarted(index, steps, key); });
  connect(ladderRunner_, &LadderRunner::rungEnded, this,
          [this](int index, const QString&, const QString&, const QString& status) { onRungEnded(index, status); });
  connect(ladderTable_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    const QTableWidgetItem* item = ladderTable_->item(row, 0);
    const QString dir = item ? item->data(Qt::UserRole).toString() : QString();
    const QString kind = item ? item->data(Qt::UserRole + 1).toString() : QString();
    QString error;
    if (!dir.isEmpty() && kind != QLatin1String("ladder")) Q_EMIT openRunsRequested(dir);
    else if (!dir.isEmpty() && !openLadder(dir, &error)) summary_->setText(error);
  });

  // A new question (other runs ticked, another baseline): the chart follows the table again.
  connect(model_, &RunsModel::shownChanged, this, [this] {
    chartOnLadder_ = ladderRunning_;
    scheduleRefresh();
  });
  connect(model_, &RunsModel::baselineChanged, this, [this] {
    chartOnLadder_ = ladderRunning_;
    scheduleRefresh();
  });
  connect(model_, &RunsModel::runAdded, this, [this](Run* run) { watch(run); });
  connect(model_, &RunsModel::runAboutToBeRemoved, this, [this] { scheduleRefresh(); });
  for (Run* run : model_->runs()) watch(run);
  refreshNow();
}

CompareView::~CompareView() = default;

void CompareView::watch(Run* run) {
  connect(run, &Run::changed, this, [this, run] {
    if (run == model_->baseline() || model_->isShown(run)) scheduleRefresh();
  });
}

// A hidden tab only notes that it is out of date (and whether File → Export has something to
// write); it catches up when shown.
void CompareView::scheduleRefresh() {
  if (!isVisible()) {
    dirty_ = true;
    noteCanExport(model_->baseline() != nullptr || ladder_.has_value());
    return;
  }
  if (!debounce_.isActive()) debounce_.start();
}

void CompareView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (dirty_) refreshNow();
}

bool CompareView::canExport() const { return canExport_; }

void CompareView::refreshNow() {
  debounce_.stop();
  dirty_ = false;
  report_.reset();
  comparison_.reset();
  whatIf_->setRuns({});
  Run* base = model_->baseline();
  if (!base) {
    summary_->setText(QStringLiteral("Set a baseline (right-click a run → Set as baseline) and tick the runs to compare with it."));
  } else {
    compare(*base);
  }
  showComparison();
  showLadder();
  showAdvice();
  exportButton_->setEnabled(report_.has_value() || ladder_.has_value());
  noteCanExport(report_.has_value() || ladder_.has_value());
}

// The runs as they were ingested (a history run reads its events.jsonl once, as the plots do):
// one comparison, and the report built from it.
void CompareView::compare(Run& base) {
  base.ensureEventsLoaded();
  const wb::report::RunRecord baseline = labelled(base);
  std::vector<wb::report::RunRecord> runs;
  for (Run* run : model_->shownRuns()) {
    if (run == &base || run->runDir().isEmpty()) continue;
    run->ensureEventsLoaded();
    runs.push_back(labelled(*run));
  }
  std::optional<double> target;
  if (target_->value() > 0) target = target_->value() / 100.0;
  comparison_ = wb::report::compareRuns(baseline, runs, target, wb::report::noiseOfRunHost(baseline),
                                        minEffect_->value() / 100.0);
  std::vector<const wb::report::RunRecord*> records{&baseline};
  for (const auto& run : runs) records.push_back(&run);
  // The advisor recommends the worker count each run's stored probe measured, when there is one.
  report_ = wb::report::buildComparisonReport(*comparison_, baseline, runs, wb::probe::storedWorkersAdvice());
  whatIf_->setRuns(records);
  QString text = QStringLiteral("%1 run(s) against the baseline %2; target %3 val acc%4.")
                     .arg(runs.size())
                     .arg(qs(wb::report::runLabel(baseline)), qs(wb::report::fmtAccuracy(comparison_->target_acc)),
                          comparison_->target_user_set ? QString() : QStringLiteral(" (auto)"));
  if (runs.empty()) text += QStringLiteral(" Tick runs in the list to compare them.");
  // The band every verdict is judged against, and what it means for 1 run each (the table's
  // verdict columns and the runs list's tooltips name it too).
  summary_->setToolTip(QStringLiteral("Target: %1.\n%2.")
                           .arg(qs(comparison_->target.describe()), qs(wb::report::noiseMessage(comparison_->noise))));
  const auto contended = std::count_if(comparison_->rows.begin(), comparison_->rows.end(),
                                       [](const auto& row) { return !row.is_baseline && !row.contended.empty(); });
  if (contended > 0)
    text += QStringLiteral("\n\u26A0 %1 row(s) measured while another process used the CPU: their speedups are not shown.")
                .arg(contended);
  const auto unfinished = std::count_if(comparison_->rows.begin(), comparison_->rows.end(),
                                        [](const auto& row) { return !row.is_baseline && !row.unfinished.empty(); });
  if (unfinished > 0) text += QStringLiteral("\n%1 run(s) did not finish: no speedup is taken from them.").arg(unfinished);
  summary_->setText(text);
}

// The run's record under the name the window lists it by (runLabel reads the id first), so the
// table, the chart, the what-if and the exports name it as the list does.
wb::report::RunRecord CompareView::labelled(const Run& run) const {
  wb::report::RunRecord r = run.record();
  r.id = model_->displayName(&run).toStdString();
  return r;
}

void CompareView::noteCanExport(bool can) {
  if (can == canExport_) return;
  canExport_ = can;
  Q_EMIT canExportChanged(can);
}

void CompareView::showComparison() {
  if (!report_) {
    table_->clear(), table_->setRowCount(0), table_->setColumnCount(0);
    return;
  }
  fillTable(table_, report_->tables.front());
  // A row measured under contention (its run or the baseline) carries a warning on its name.
  const QIcon warning = style()->standardIcon(QStyle::SP_MessageBoxWarning);
  for (int r = 0; comparison_ && r < int(comparison_->rows.size()) && r < table_->rowCount(); ++r) {
    const auto& row = comparison_->rows[size_t(r)];
    QTableWidgetItem* name = table_->item(r, 0);
    if (row.contended.empty() || !name) continue;
    name->setIcon(warning);
    name->setToolTip(QStringLiteral("Measured under contention: %1. Its speedups are not shown: rerun on an idle machine.")
                         .arg(qs(row.contended)));
  }
}

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
// ladder here, a try's or a search's runs as a group in the runs list).
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
    name->setToolTip(kind == QLatin1String("ladder") ? dir : dir + QStringLiteral("\nDouble-click: its runs in the runs list, on the plots"));
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

void CompareView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange && advice_) showAdvice();
}

void CompareView::showAdvice() {
  QString html;
  if (report_) html += adviceHtml(report_->advice, advice_->palette());
  if (ladder_) html += QStringLiteral("<p><i>The ladder's tables, verdicts and runs are in %1 (ladder.html).</i></p>").arg(ladderDir_.toHtmlEscaped());
  if (html.isEmpty()) html = QStringLiteral("<p>The advisor's verdicts appear here once a baseline is set.</p>");
  advice_->setHtml(html);
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

bool CompareView::exportTo(const QString& path, QString* error) const {
  const QString ext = QFileInfo(path).suffix().toLower();
  if (ext == QLatin1String("png") || ext == QLatin1String("svg") || ext == QLatin1String("pdf")) {
    if (chart_->isEmpty()) {
      if (error) *error = QStringLiteral("There is no chart yet: set a baseline and tick runs, or open a ladder.");
      return false;
    }
    return chart_->save(path, error);
  }
  auto format = wb::report::formatForPath(path8(path));
  if (!format) {
    if (error) *error = QStringLiteral("Unknown format \"%1\": use .html, .md, .csv, .tex, .json, .png, .svg or .pdf.").arg(ext);
    return false;
  }
  wb::report::Report rep;
  if (report_) rep = *report_;
  else if (ladder_) rep = wb::ladder::buildLadderReport(*ladder_, {});
  else {
    if (error) *error = QStringLiteral("Nothing to export yet: set a baseline and tick runs, or open a ladder.");
    return false;
  }
  if (report_ && ladder_) {  // the open ladder travels with the comparison
    rep.tables.push_back(wb::ladder::ladderTable(*ladder_));
    rep.figures.push_back({"ladder", wb::ladder::ladderChart(*ladder_), ""});
  }
  auto st = wb::report::writeReport(rep, *format, path8(path));
  if (!st.ok() && error) *error = qs(st.error().message);
  return st.ok();
}

void CompareView::exportDialog() {
  if (dirty_) refreshNow();
  if (!canExport()) {
    QMessageBox::information(this, QStringLiteral("Export"),
                             QStringLiteral("Nothing to export yet: set a baseline and tick runs, or open a ladder."));
    return;
  }
  static const QStringList kFilters = {QStringLiteral("HTML report (*.html)"), QStringLiteral("Markdown (*.md)"),
                                       QStringLiteral("CSV (*.csv)"),          QStringLiteral("LaTeX (*.tex)"),
                                       QStringLiteral("JSON (*.json)"),        QStringLiteral("Chart as PNG (*.png)"),
                                       QStringLiteral("Chart as SVG (*.svg)"), QStringLiteral("Chart as PDF (*.pdf)")};
  QString filter = kFilters.front();
  QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export comparison"), exportStartPath(),
                                              kFilters.join(QStringLiteral(";;")), &filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) {  // take the extension from the chosen filter
    const int star = filter.indexOf(QStringLiteral("*."));
    path += filter.mid(star + 1, filter.indexOf(QLatin1Char(')'), star) - star - 1);
  }
  QString error;
  if (exportTo(path, &error)) {
    summary_->setText(QStringLiteral("Wrote ") + path);
    lastExportDir_ = QFileInfo(path).absolutePath();
  } else {
    QMessageBox::warning(this, QStringLiteral("Export"), error);
  }
}

QString CompareView::exportStartPath() const {
  const bool ladderShown = chartOnLadder_ && !ladderDir_.isEmpty();
  const QString dir = !lastExportDir_.isEmpty() ? lastExportDir_
                      : ladderShown             ? ladderDir_
                      : !runsRoot_.isEmpty()    ? runsRoot_
                                                : QDir::homePath();
  return QDir(dir).filePath(ladderShown ? QStringLiteral("ladder.html") : QStringLiteral("comparison.html"));
}

void CompareView::tableMenu(const QPoint& pos) {
  QMenu menu(this);
  QAction* exportAction = menu.addAction(QStringLiteral("Export…"));
  QAction* csv = menu.addAction(QStringLiteral("Copy table as CSV"));
  QAction* md = menu.addAction(QStringLiteral("Copy table as Markdown"));
  for (QAction* a : {exportAction, csv, md}) a->setEnabled(report_.has_value());
  QAction* chosen = menu.exec(table_->viewport()->mapToGlobal(pos));
  if (!chosen || !report_) return;
  if (chosen == exportAction) {
    exportDialog();
  } else if (chosen == csv) {
    QApplication::clipboard()->setText(qs(wb::report::renderCsv(report_->tables.front())));
  } else if (chosen == md) {
    wb::report::Report only;
    only.title = report_->title;
    only.tables = {report_->tables.front()};
    QApplication::clipboard()->setText(qs(wb::report::renderMarkdown(only)));
  }
}

}  // namespace wb::ui
