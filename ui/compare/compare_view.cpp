#include "compare/compare_view.h"

#include "compare/answer_label.h"

#include <algorithm>
#include <cmath>

#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFile>
#include <QFileInfo>
#include <QFontMetrics>
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

#include "compare/report_table.h"
#include "compare/speedup_chart.h"
#include "compare/whatif_view.h"
#include "runs/run.h"
#include "runs/runs_model.h"
#include "wb/probe/record.h"
#include "wb/advice/actions.h"
#include "wb/advice/busy_machine.h"
#include "wb/proto/rundir.h"
#include "wb/report/export.h"
#include "wb/report/tensorboard.h"

namespace wb::ui {

namespace {

constexpr int kDebounceMs = 500;  // runs emit changed() per event; recompute at most twice a second while shown

QString qs(const std::string& s) { return QString::fromStdString(s); }

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
      const QString& colour = v.severity == wb::advice::Severity::Warning ? warning
                              : v.severity == wb::advice::Severity::Tip   ? tip
                                                                          : info;
      QString text = qs(v.text);
      if (const auto action = wb::advice::actionOf(v))  // its command is a button under the verdicts
        text.replace(QStringLiteral("`workbench-cli %1`").arg(qs(action->args)), QStringLiteral("\u201C%1\u201D below").arg(qs(action->label)));
      html += QStringLiteral("<li style=\"color:%1\"><b>%2:</b> %3</li>")
                  .arg(colour, QLatin1String(wb::advice::severityName(v.severity)), text.toHtmlEscaped());
    }
    html += QStringLiteral("</ul>");
  }
  return html;
}

}  // namespace

CompareView::CompareView(RunsModel* model, QWidget* parent)
    : QWidget(parent), model_(model) {
  auto* layout = new QVBoxLayout(this);
  QHBoxLayout* controls = buildControls();
  layout->addLayout(controls);
  buildSummary(layout, controls);
  layout->addWidget(buildTables(), 1);
  connectControls();
  connectModel();
  for (Run* run : model_->runs()) watch(run);
  refreshNow();
}

// Target, Effect ≥, Export….
QHBoxLayout* CompareView::buildControls() {
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
  minEffect_->setValue(wb::stats::kDefaultMinEffect * 100);
  minEffect_->setToolTip(QStringLiteral("A speedup is called faster or slower only when its interval excludes 1 and it is "
                                        "at least this large; smaller effects read \"within noise\" however sure"));
  controls->addWidget(minEffect_);
  exportButton_ = new QPushButton(QStringLiteral("Export…"), this);
  controls->addWidget(exportButton_);

  return controls;
}

// The answer (each ticked run's figure, large) with Use …, on its own row over the controls; the
// summary's details under them.
void CompareView::buildSummary(QVBoxLayout* layout, QHBoxLayout* controls) {
  QWidget* box = this;
  // Its own row, wrapped: the whole sentence at any width in at most three lines, else cut at a
  // word with "…" (its tooltip has it whole), so the chart keeps its height.
  answer_ = new AnswerLabel(3, box);
  answer_->setObjectName(QStringLiteral("compareAnswer"));
  useButton_ = new QPushButton(box);
  useButton_->setObjectName(QStringLiteral("compareUse"));
  useButton_->setToolTip(QStringLiteral("Load this run's set-up (it says what changes before it does)"));
  useButton_->hide();
  connect(useButton_, &QPushButton::clicked, this, [this] {
    if (!useRun_ || useRun_->runDir().isEmpty()) return;
    Q_EMIT useConfig(QString::fromStdString(wb::proto::RunDir{useRun_->runDir().toStdString()}.config().string()), useButton_->text());
  });
  auto* answerRow = new QHBoxLayout;
  answerRow->addWidget(answer_, 1);
  answerRow->addWidget(useButton_, 0, Qt::AlignTop);
  layout->insertLayout(0, answerRow);  // over Target, Effect ≥ and Export…
  controls->addStretch(1);
  summary_ = new QLabel(box);
  summary_->setObjectName(QStringLiteral("compareSummary"));
  summary_->setWordWrap(true);
  summary_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  // Three lines kept whatever it says: the tabs under it do not jump as its lines come and go.
  summary_->setMinimumHeight(3 * summary_->fontMetrics().lineSpacing() + 4);
  // At most four: a long note (a busy machine's advice) must not take the chart's height.
  summary_->setMaximumHeight(4 * summary_->fontMetrics().lineSpacing() + 4);
  layout->addWidget(summary_);
}

QString CompareView::answerText() const { return answer_->answer(); }

// The comparison's answer: the report's own sentence when core wrote one ("answer"), else each
// ticked run's figure to the target as the table gives it (its interval and verdict, or why it
// has none); Use … for the run clearly fastest to the target.
void CompareView::showAnswer() {
  useRun_ = nullptr;
  useButton_->hide();
  if (!comparison_ || !report_) {
    answer_->setAnswer(model_->baseline() ? QStringLiteral("Tick runs in the list to compare them with the baseline.")
                                        : QStringLiteral("Set a baseline, then tick the runs to compare with it."));
    return;
  }
  const auto& data = report_->data;
  if (data.is_object() && data.contains("answer") && data["answer"].is_string()) {
    answer_->setAnswer(qs(data["answer"].get<std::string>()));
  } else {
    QStringList lines;
    const QString to = qs(wb::fmtAccuracy(comparison_->target_acc));
    int shown = 0, more = 0;
    for (const auto& row : comparison_->rows) {
      if (row.is_baseline) continue;
      if (++shown > 1) {  // one figure, large; the table holds the others
        ++more;
        continue;
      }
      const QString figure = !row.showsSpeedup()             ? qs(row.withheldWord()) + QStringLiteral(": no speedup taken")
                             : std::isfinite(row.target.point) ? qs(wb::stats::formatEstimate(row.target)) + QStringLiteral(" to ") + to
                                                               : QStringLiteral("did not reach ") + to;
      lines << QStringLiteral("%1: %2").arg(qs(row.label), figure);
    }
    if (more > 0 && !lines.isEmpty()) lines.back() += QStringLiteral("; %1 more in the table").arg(more);
    answer_->setAnswer(lines.isEmpty() ? QStringLiteral("Tick runs in the list to compare them with the baseline.") : lines.front());
  }
  // The run clearly faster to the target, the fastest of them: its set-up is the one to use.
  const wb::compare::ComparisonRow* best = nullptr;
  for (const auto& row : comparison_->rows)
    if (row.showsSpeedup() && row.target.verdict == wb::stats::Verdict::Faster && (!best || row.target.point > best->target.point))
      best = &row;
  if (!best) return;
  for (Run* run : model_->shownRuns())
    if (run->runDir() == qs(best->dir) || model_->displayName(run) == qs(best->label)) useRun_ = run;
  if (!useRun_) return;
  useButton_->setText(QStringLiteral("Use %1's set-up").arg(model_->displayName(useRun_)));
  useButton_->show();
}

// The table over one set of tabs: the chart first, with the whole width (beside another
// tab it was squeezed to a sliver), then the advisor and the what-if.
QSplitter* CompareView::buildTables() {
  auto* split = new QSplitter(Qt::Vertical, this);
  auto* table = new PlaceholderTable(this);
  table->setPlaceholder(QStringLiteral("The ticked runs against the baseline appear here: their time to the target, "
                                       "throughput and verdicts (right-click a run → Set as baseline)."));
  table_ = table;
  table_->setObjectName(QStringLiteral("compareTable"));
  table_->setContextMenuPolicy(Qt::CustomContextMenu);
  table_->verticalHeader()->setVisible(false);
  table_->setWordWrap(false);  // one line a run: more rows in view (each cell's tooltip has it all)
  table_->setTextElideMode(Qt::ElideMiddle);  // runs that share a start differ at the end
  split->addWidget(table_);
  detailTabs_ = new QTabWidget(split);
  detailTabs_->setObjectName(QStringLiteral("compareTabs"));
  chart_ = new SpeedupChart(detailTabs_);
  auto* advisor = new QWidget(detailTabs_);
  auto* advisorLayout = new QVBoxLayout(advisor);
  advisorLayout->setContentsMargins(0, 0, 0, 0);
  advice_ = new QTextBrowser(advisor);
  advice_->setObjectName(QStringLiteral("compareAdvice"));
  adviceActions_ = new QWidget(advisor);
  adviceActions_->setObjectName(QStringLiteral("adviceActions"));
  auto* actionsRow = new QHBoxLayout(adviceActions_);
  actionsRow->setContentsMargins(4, 0, 4, 4);
  actionsRow->addStretch(1);
  advisorLayout->addWidget(advice_, 1);
  advisorLayout->addWidget(adviceActions_);
  detailTabs_->addTab(chart_, QStringLiteral("Chart"));
  detailTabs_->addTab(advisor, QStringLiteral("Advisor"));
  whatIf_ = new WhatIfView(detailTabs_);
  detailTabs_->addTab(whatIf_, QStringLiteral("Early-stopping what-if"));
  split->addWidget(detailTabs_);
  split->setChildrenCollapsible(false);
  // Three rows in view at least, under the header (a 1024x700 window left it two).
  table_->setMinimumHeight(table_->horizontalHeader()->sizeHint().height() + table_->verticalHeader()->defaultSectionSize() * 3 +
                           2 * table_->frameWidth() + table_->horizontalScrollBar()->sizeHint().height());
  split->setStretchFactor(0, 1);  // the table and the chart share the height
  split->setStretchFactor(1, 1);

  return split;
}

void CompareView::connectControls() {
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
  connect(table_, &QTableWidget::customContextMenuRequested, this, &CompareView::tableMenu);
}

void CompareView::connectModel() {
  connect(model_, &RunsModel::shownChanged, this, [this] { scheduleRefresh(); });
  connect(model_, &RunsModel::baselineChanged, this, [this] { scheduleRefresh(); });
  connect(model_, &RunsModel::runAdded, this, [this](Run* run) { watch(run); });
  connect(model_, &RunsModel::runAboutToBeRemoved, this, [this] { scheduleRefresh(); });
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
    noteCanExport(model_->baseline() != nullptr);
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
  showAnswer();
  showComparison();
  showChart();
  showAdvice();
  exportButton_->setEnabled(report_.has_value());
  noteCanExport(report_.has_value());
}

// The runs as they were ingested (a history run reads its events.jsonl once, as the plots do):
// one comparison, and the report built from it.
void CompareView::compare(Run& base) {
  base.ensureEventsLoaded();
  const wb::records::RunRecord baseline = labelled(base);
  std::vector<wb::records::RunRecord> runs;
  for (Run* run : model_->shownRuns()) {
    if (run == &base || run->runDir().isEmpty()) continue;
    run->ensureEventsLoaded();
    runs.push_back(labelled(*run));
  }
  std::optional<double> target;
  if (target_->value() > 0) target = target_->value() / 100.0;
  comparison_ = wb::compare::compareRuns(baseline, runs, target, wb::records::noiseOfRunHost(baseline),
                                        minEffect_->value() / 100.0);
  std::vector<const wb::records::RunRecord*> records{&baseline};
  for (const auto& run : runs) records.push_back(&run);
  // The advisor recommends the worker count each run's stored probe measured, when there is one.
  report_ = wb::report::buildComparisonReport(*comparison_, baseline, runs, wb::probe::storedWorkersAdvice());
  whatIf_->setRuns(records);
  QString text = QStringLiteral("Against the baseline %1, to %2 val acc%3 (the target).")
                     .arg(qs(wb::records::runLabel(baseline)), qs(wb::fmtAccuracy(comparison_->target_acc)),
                          comparison_->target_user_set ? QString() : QStringLiteral(", chosen automatically"));
  // The band every verdict is judged against, and what it means for 1 run each (the table's
  // verdict columns and the runs list's tooltips name it too).
  summary_->setToolTip(QStringLiteral("Target: %1.\n%2.")
                           .arg(qs(comparison_->target.describe()), qs(wb::records::noiseMessage(comparison_->noise))));
  // How much load, from what, and what it takes for the runs to count (not only "contended").
  if (const std::string busy = wb::advice::busyMachineAdvice(wb::advice::busyMachineOf(*comparison_)); !busy.empty())
    text += QStringLiteral("\n\u26A0 ") + qs(busy);
  const auto unfinished = std::count_if(comparison_->rows.begin(), comparison_->rows.end(),
                                        [](const auto& row) { return !row.is_baseline && !row.unfinished.empty(); });
  if (unfinished > 0) text += QStringLiteral("\n%1 run(s) did not finish: no speedup is taken from them.").arg(unfinished);
  summary_->setText(text);
  summary_->setToolTip(summary_->toolTip() + QStringLiteral("\n\n") + text);  // whole, past its four lines
}

// The run's record under the name the window lists it by (runLabel reads the id first), so the
// table, the chart, the what-if and the exports name it as the list does.
wb::records::RunRecord CompareView::labelled(const Run& run) const {
  wb::records::RunRecord r = run.record();
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

void CompareView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange && advice_) showAdvice();
}

void CompareView::showAdvice() {
  QString html;
  if (report_) html += adviceHtml(report_->advice, advice_->palette());
  if (html.isEmpty()) html = QStringLiteral("<p>The advisor's verdicts appear here once a baseline is set.</p>");
  advice_->setHtml(html);
  showAdviceActions();
}

// Each action the verdicts suggest (a command their text names), once, as a button under them.
void CompareView::showAdviceActions() {
  for (auto* b : adviceActions_->findChildren<QPushButton*>()) delete b;
  QStringList seen;
  auto* row = static_cast<QHBoxLayout*>(adviceActions_->layout());
  for (const auto& block : report_ ? report_->advice : std::vector<wb::report::AdviceBlock>{})
    for (const auto& v : block.verdicts) {
      const auto action = wb::advice::actionOf(v);
      const QString args = action ? qs(action->args) : QString();
      if (args.isEmpty() || seen.contains(args)) continue;
      seen << args;
      auto* button = new QPushButton(qs(action->label), adviceActions_);
      button->setObjectName(QStringLiteral("adviceAction"));
      button->setToolTip(QStringLiteral("Runs workbench-cli %1").arg(args));
      connect(button, &QPushButton::clicked, this, [this, args] { Q_EMIT actionRequested(args); });
      row->insertWidget(row->count() - 1, button);
    }
  adviceActions_->setVisible(!seen.isEmpty());
}

bool CompareView::exportTo(const QString& path, QString* error) const {
  if (!report_) {
    if (error) *error = QStringLiteral("Nothing to export yet: set a baseline and tick runs.");
    return false;
  }
  return writeReportOrChart(path, *report_, *chart_, error);
}

bool CompareView::exportTensorBoard(const QString& folder, QString* error) const {
  std::vector<std::string> dirs;
  Run* base = model_->baseline();
  if (base && !base->runDir().isEmpty()) dirs.push_back(QFile::encodeName(base->runDir()).toStdString());
  for (Run* run : model_->shownRuns())
    if (run != base && !run->runDir().isEmpty()) dirs.push_back(QFile::encodeName(run->runDir()).toStdString());
  if (dirs.empty()) {
    if (error) *error = QStringLiteral("Nothing to export yet: set a baseline and tick runs.");
    return false;
  }
  auto written = wb::report::writeTensorBoard(dirs, QFile::encodeName(folder).toStdString());
  if (!written.ok() && error) *error = qs(written.error().message);
  return written.ok();
}

void CompareView::exportDialog() {
  if (dirty_) refreshNow();
  if (!canExport()) {
    QMessageBox::information(this, QStringLiteral("Export"),
                             QStringLiteral("Nothing to export yet: set a baseline and tick runs."));
    return;
  }
  const QString path = exportWithDialog(this, QStringLiteral("Export comparison"), exportStartPath(),
                                        [this](const QString& to, QString* error) { return exportTo(to, error); },
                                        [this](const QString& to, QString* error) { return exportTensorBoard(to, error); });
  if (path.isEmpty()) return;
  summary_->setText(QStringLiteral("Wrote ") + path);
  lastExportDir_ = QFileInfo(path).absolutePath();
}

QString CompareView::exportStartPath() const {
  const QString dir = !lastExportDir_.isEmpty() ? lastExportDir_ : !runsRoot_.isEmpty() ? runsRoot_ : QDir::homePath();
  return QDir(dir).filePath(QStringLiteral("comparison.html"));
}

QStringList CompareView::targetArguments() const {
  if (target_->value() <= 0) return {};  // auto: each command's own default
  return {QStringLiteral("--target-acc"), QString::number(target_->value() / 100.0, 'g', 10)};
}

double CompareView::minEffect() const { return minEffect_->value() / 100.0; }

// The comparison's bars with each run's whole label (the chart elides it to its width).
void CompareView::showChart() {
  wb::render::BarChartSpec spec;
  if (comparison_) spec = wb::report::comparisonBars(*comparison_);
  for (size_t i = 0; comparison_ && i < spec.bars.size() && i < comparison_->rows.size(); ++i) spec.bars[i].label = comparison_->rows[i].label;
  chart_->setBars(spec);
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
