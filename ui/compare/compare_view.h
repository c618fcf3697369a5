#pragma once
// The Compare tab: each ticked run against the baseline (time per epoch, train samples/s,
// wall time, time to the target accuracy and the speedup on each, best/final val acc with Δ pp,
// eval time, time to first step, the command's wall time, cores used and other load, peak memory
// and its ratio, epochs, fp16 skipped steps, status, what differs from the baseline; a row
// measured under CPU contention carries a warning and "contended" instead of its speedups), a
// speedup bar chart (the ladder's speedup to the target accuracy when a ladder is open, else each
// run's speedup to the target), the advisor's verdicts, and export (md, csv, tex, json, html; the chart
// as png, svg, pdf). "Run ladder" runs `workbench-cli ladder` on the baseline's config as a child
// process; "Open ladder…" shows a finished one. The Fastest tab runs `workbench-cli tune` (TuneView).
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

#include "compare/ladder_runner.h"
#include "wb/ladder/ladder.h"
#include "wb/report/report.h"

class QDoubleSpinBox;
class QHBoxLayout;
class QSplitter;
class QLabel;
class QPushButton;
class QTabWidget;
class QTableWidget;
class QTextBrowser;

namespace wb::ui {

class LadderRunner;
class Run;
class RunsModel;
class SpeedupChart;
class TuneView;
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
  // Where Export… opens: the folder of the last export, else the ladder shown, else the runs
  // folder (never only the home folder), with the file name to suggest.
  QString exportStartPath() const;
  // Shows the ladder written in dir (or a ladder.json). False with the reason in *error.
  bool openLadder(const QString& dirOrFile, QString* error);
  // Starts `workbench-cli ladder` on the baseline's config (output under the runs root), with
  // --lr-scaling from the source set here (the set-up panel's optim.lr_scaling) when it scales
  // (its "none" leaves the ladder's default: linear for SGD, sqrt for Adam).
  void runLadder();
  void setLadderLrScaling(std::function<QString()> source) { ladderLrScaling_ = std::move(source); }
  // The Target set here as the CLI takes it ("--target-acc 0.135"); empty on auto. Run ladder,
  // Find fastest and Try vs baseline pass it, so they measure to the target shown here.
  QStringList targetArguments() const;
  // The experiment file Run ladder and Find fastest start from ("" with the reason in *why); ""
  // and no reason, or no source: the baseline's config.json. The window's: the set-up's when it
  // runs Your script.
  void setExperimentSource(std::function<QString(QString* why)> source) { experimentSource_ = std::move(source); }
  // Where Open ladder… starts and where the Ladder tab looks for ladders on disk (the runs root).
  void setRunsRoot(const QString& root);
  // The ladders found under the runs root (folders holding a ladder.json), newest first: what the
  // Ladder tab lists while none is open.
  QStringList laddersOnDisk() const;
  // Every experiment under the runs root, newest first: ladders (ladder.json), tries (try.json)
  // and searches (tune.json), as (folder, kind: "ladder" | "try" | "search").
  QList<QPair<QString, QString>> experimentsOnDisk() const;
  LadderRunner* ladderRunner() const { return ladderRunner_; }
  // The "Fastest" tab: Find fastest (workbench-cli tune) and its result.
  TuneView* tuneView() const { return tune_; }

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
  // A try or a search was opened from the list: the window lists its runs and shows them as a group.
  void openRunsRequested(const QString& experimentDir);

 protected:
  void changeEvent(QEvent* event) override;  // a theme change recolours the verdicts
  void showEvent(QShowEvent* event) override;  // catches up on what changed while hidden

 private:
  QHBoxLayout* buildControls();
  QLabel* buildSummary();
  QSplitter* buildTables();
  void connectControls();
  void connectLadderRunner();
  void connectModel();
  void scheduleRefresh();
  void compare(Run& base);
  wb::report::RunRecord labelled(const Run& run) const;
  void noteCanExport(bool can);
  void watch(Run* run);
  void showComparison();
  void showLadder();
  void showAdvice();
  void tableMenu(const QPoint& pos);
  void onLadderFinished(const QString& outDir, bool cancelled, const QString& error);
  void onRungStarted(int index, int steps, const QString& key);
  void onRungEnded(int index, const QString& status);
  void showLivePlan();
  void showLaddersOnDisk();
  void setLadderTabText(const QString& text);

  RunsModel* model_;
  QTimer debounce_;
  QDoubleSpinBox* target_;
  QDoubleSpinBox* minEffect_;
  QPushButton* exportButton_;
  QPushButton* ladderButton_;
  QPushButton* stopLadderButton_;
  QPushButton* openLadderButton_;
  QLabel* summary_;
  QTableWidget* table_;
  SpeedupChart* chart_;
  QTabWidget* detailTabs_;
  QTextBrowser* advice_ = nullptr;
  QTableWidget* ladderTable_;
  WhatIfView* whatIf_;                                   // the early-stopping what-if tab
  LadderRunner* ladderRunner_;
  TuneView* tune_ = nullptr;
  CutExperiment cutLadder_;  // the last ladder started: continued by Run ladder while cut
  std::function<QString()> ladderLrScaling_;
  std::function<QString(QString* why)> experimentSource_;
  QString experimentFile(QString* why) const;
  std::optional<wb::report::Report> report_;             // the comparison
  std::optional<wb::report::Comparison> comparison_;
  std::optional<wb::ladder::Ladder> ladder_;             // the open ladder
  QString ladderDir_;
  QString lastExportDir_;
  QString runsRoot_;
  nlohmann::json livePlan_;                              // the running ladder's steps, with "status"
  bool ladderRunning_ = false;
  // The chart answers the last question asked: the ladder's once one is run or opened, the
  // ticked runs' again once the baseline or the ticks change (the table is always theirs).
  bool chartOnLadder_ = false;
  bool canExport_ = false;
  bool dirty_ = false;     // something changed while hidden
};

}  // namespace wb::ui
