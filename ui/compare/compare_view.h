#pragma once
// The Compare tab: each ticked run against the baseline (time per epoch, train samples/s,
// wall time, time to the target accuracy and the speedup on each, best/final val acc with Δ pp,
// eval time, time to first step, the command's wall time, cores used and other load, peak memory
// and its ratio, epochs, fp16 skipped steps, status, what differs from the baseline; a row
// measured under CPU contention carries a warning and "contended" instead of its speedups), a
// speedup bar chart (each run's speedup to the target), the advisor's verdicts, the early-stopping
// what-if, and export (md, csv, tex, json, html; the chart as png, svg, pdf; the runs as
// TensorBoard event files). Its Target and
// Effect ≥ are also what the Experiments tab's ladder and search measure to (ExperimentView).
//
// It leads with the answer, large: the comparison's own sentence when core's report carries one
// ("answer"), else each ticked run's figure to the target (its interval and verdict, or why it
// has none), with "Use …'s set-up" for the run clearly fastest; each action a verdict suggests (a
// command it names) is a button under the Advisor's verdicts (actionRequested).
//
// Everything it shows comes from wb_report (the same maths as `compare`, `export`, `ladder`),
// fed with the RunRecords the window's Runs built from the events they already ingested (a
// history run reads its events.jsonl once): no file is re-read to refresh.
//
// Inputs: the RunsModel — shownRuns() are compared, baseline() is the baseline; its signals and
// each Run's changed() (debounced, 500 ms) say when to recompute, and only while the tab is
// shown (a hidden tab catches up when shown). Thread affinity: GUI thread.
// Ownership: QObject tree; the model outlives the view.
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

#include "wb/report/report.h"

class QDoubleSpinBox;
class QHBoxLayout;
class QVBoxLayout;
class QSplitter;
class QLabel;
class QPushButton;
class QTabWidget;
class QTableWidget;
class QTextBrowser;

namespace wb::ui {

class AnswerLabel;
class Run;
class RunsModel;
class SpeedupChart;
class WhatIfView;

class CompareView : public QWidget {
  Q_OBJECT
 public:
  explicit CompareView(RunsModel* model, QWidget* parent = nullptr);
  ~CompareView() override;

  // File → Export (Ctrl+E): asks where and in which format, writes the comparison (or the chart).
  void exportDialog();
  // Whether exportDialog() has something to write (the window enables File → Export with it).
  bool canExport() const;

  // Writes the current comparison (md/csv/tex/json/html by extension) or, for png/svg/pdf, the
  // chart. False with the reason in *error.
  bool exportTo(const QString& path, QString* error) const;
  // Writes the baseline and the ticked runs into `folder` as TensorBoard event files, a folder
  // per run (wb/report/tensorboard.h; a run already there is left alone). False with the reason.
  bool exportTensorBoard(const QString& folder, QString* error) const;
  // Where Export… opens: the folder of the last export, else the runs folder (never only the
  // home folder), with the file name to suggest.
  QString exportStartPath() const;
  // The Target set here as the CLI takes it ("--target-acc 0.135"); empty on auto. Run ladder,
  // Find fastest and Try vs baseline pass it, so they measure to the target shown here.
  QStringList targetArguments() const;
  // The Effect ≥ set here (0.02 = 2 %): the verdicts' threshold, passed on as the target is.
  double minEffect() const;
  // Where Export… starts.
  void setRunsRoot(const QString& root) { runsRoot_ = root; }

  // The sentence that leads the tab: each ticked run's figure against the baseline.
  QString answerText() const;
  // What is shown (tests): the comparison table and the chart's bars.
  const QTableWidget* table() const { return table_; }
  const SpeedupChart* chart() const { return chart_; }
  const WhatIfView* whatIf() const { return whatIf_; }
  const std::optional<wb::report::Report>& report() const { return report_; }
  // Recomputes now (normally debounced, and only while shown).
  void refreshNow();
  // Whether a change arrived while the tab was hidden (tests).
  bool isStale() const { return dirty_; }

 Q_SIGNALS:
  void canExportChanged(bool canExport);
  // "Use …'s set-up": load the clearly fastest run's config (written as an experiment file) into
  // the set-up; `what` names the button.
  void useConfig(const QString& path, const QString& what);
  // An Advisor button: run what the verdict suggests (workbench-cli arguments: "probe peak").
  void actionRequested(const QString& arguments);

 protected:
  void changeEvent(QEvent* event) override;  // a theme change recolours the verdicts
  void showEvent(QShowEvent* event) override;  // catches up on what changed while hidden

 private:
  QHBoxLayout* buildControls();
  void buildSummary(QVBoxLayout* layout, QHBoxLayout* controls);
  void showAnswer();
  QSplitter* buildTables();
  void connectControls();
  void connectModel();
  void scheduleRefresh();
  void compare(Run& base);
  wb::records::RunRecord labelled(const Run& run) const;
  void noteCanExport(bool can);
  void watch(Run* run);
  void showComparison();
  void showChart();
  void showAdvice();
  void showAdviceActions();
  void tableMenu(const QPoint& pos);

  RunsModel* model_;
  QTimer debounce_;
  QDoubleSpinBox* target_;
  QDoubleSpinBox* minEffect_;
  QPushButton* exportButton_;
  AnswerLabel* answer_;  // the answer sentence, large and first
  QPushButton* useButton_;
  QPointer<Run> useRun_;  // the run Use … loads: the clearly fastest to the target
  QLabel* summary_;
  QTableWidget* table_;
  SpeedupChart* chart_;
  QTabWidget* detailTabs_;
  QTextBrowser* advice_ = nullptr;
  QWidget* adviceActions_ = nullptr;  // a button per action the verdicts suggest
  WhatIfView* whatIf_;                                   // the early-stopping what-if tab
  std::optional<wb::report::Report> report_;             // the comparison
  std::optional<wb::compare::Comparison> comparison_;
  QString lastExportDir_;
  QString runsRoot_;
  bool canExport_ = false;
  bool dirty_ = false;     // something changed while hidden
};

}  // namespace wb::ui
