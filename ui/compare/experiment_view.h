#pragma once
// The Experiments tab, beside Compare: the experiments that answer "which speedups pay here?"
// on the baseline's experiment. "Run ladder" runs `workbench-cli ladder` as a child process (its
// live plan step by step, then its table, and its chart of speedups to the target on the Chart
// tab), "Open ladder…" shows a finished one, the Fastest tab runs `workbench-cli tune`
// (TuneView), and while no ladder is open the Ladder tab lists the ladders, tries and searches
// under the runs root (double-click opens one). Export writes the open ladder (html, md, csv, tex, json; the chart as
// png, svg, pdf).
//
// The question it asks is the Compare tab's: its Target and Effect ≥ (setTargetSource,
// setMinEffectSource), and the experiment file the window names (setExperimentSource), else
// the baseline's config.json. Thread affinity: GUI thread. Ownership: QObject tree; the model
// outlives the view.
#include <QWidget>

#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "compare/experiment_runner.h"
#include "wb/ladder/ladder.h"

class QLabel;
class QPushButton;
class QTabWidget;
class QTableWidget;

namespace wb::ui {

class RunsModel;
class SpeedupChart;
class TuneView;

class ExperimentView : public QWidget {
  Q_OBJECT
 public:
  explicit ExperimentView(RunsModel* model, QWidget* parent = nullptr);
  ~ExperimentView() override;

  // Shows the ladder written in dir (or a ladder.json). False with the reason in *error.
  bool openLadder(const QString& dirOrFile, QString* error);
  // Starts `workbench-cli ladder` on the experiment file (output under the runs root), with
  // --lr-scaling from the source set here (the set-up panel's optim.lr_scaling) when it scales
  // (its "none" leaves the ladder's default: linear for SGD, sqrt for Adam), and the Compare
  // tab's target and threshold.
  void runLadder();
  void setLadderLrScaling(std::function<QString()> source) { ladderLrScaling_ = std::move(source); }
  // The target as the CLI takes it ("--target-acc 0.135"; empty on auto) and the verdicts'
  // threshold (0.02 = 2 %): what Run ladder and Find fastest measure to.
  void setTargetSource(std::function<QStringList()> source);
  void setMinEffectSource(std::function<double()> source) { minEffectSource_ = std::move(source); }
  // The experiment file Run ladder and Find fastest start from ("" with the reason in *why); ""
  // and no reason, or no source: the baseline's config.json.
  void setExperimentSource(std::function<QString(QString* why)> source) { experimentSource_ = std::move(source); }
  // Where Open ladder… starts and where the Ladder tab looks for experiments on disk.
  void setRunsRoot(const QString& root);
  // The ladders found under the runs root (folders holding a ladder.json), newest first.
  QStringList laddersOnDisk() const;
  // Every experiment under the runs root, newest first: ladders (ladder.json), tries (try.json)
  // and searches (tune.json), as (folder, kind: "ladder" | "try" | "search").
  QList<QPair<QString, QString>> experimentsOnDisk() const;
  ExperimentRunner* ladderRunner() const { return ladderRunner_; }
  // The Fastest tab: Find fastest (workbench-cli tune) and its result.
  TuneView* tuneView() const { return tune_; }
  // The open ladder's speedups to the target (empty while none is open).
  const SpeedupChart* chart() const { return chart_; }

  // Export: the open ladder's report (by extension) or, for png/svg/pdf, its chart. False with
  // the reason in *error.
  bool exportTo(const QString& path, QString* error) const;
  bool canExport() const { return ladder_.has_value(); }
  void exportDialog();
  // Where Export… opens: the folder of the last export, else the open ladder's.
  QString exportStartPath() const;

 Q_SIGNALS:
  void canExportChanged(bool canExport);
  // A try or a search was opened from the list: the window lists its runs and shows them as a group.
  void openRunsRequested(const QString& experimentDir);

 protected:
  void showEvent(QShowEvent* event) override;  // the Compare tab's target may have changed

 private:
  QWidget* buildControls();
  void showQuestion();
  QWidget* buildTabs();
  void connectExperimentRunner();
  void openListed(int row);
  QString experimentFile(QString* why) const;
  QStringList ladderArguments(const QString& config) const;
  void showLadder();
  void showLaddersOnDisk();
  void showLivePlan();
  void setLadderTabText(const QString& text);
  void setRunning(bool running);
  void onRungStarted(int index, int steps, const QString& key);
  void onRungEnded(int index, const QString& status);
  void onLadderFinished(const QString& outDir, bool cancelled, const QString& error);

  RunsModel* model_;
  QPushButton* ladderButton_;
  QPushButton* stopLadderButton_;
  QPushButton* openLadderButton_;
  QPushButton* exportButton_;
  QLabel* question_;  // the target and threshold it measures to (the Compare tab's)
  QLabel* summary_;
  QTabWidget* tabs_;
  QTableWidget* ladderTable_;
  SpeedupChart* chart_;
  TuneView* tune_;
  ExperimentRunner* ladderRunner_;
  CutExperiment cutLadder_;  // the last ladder started: continued by Run ladder while cut
  std::function<QString()> ladderLrScaling_;
  std::function<QStringList()> targetSource_;
  std::function<double()> minEffectSource_;
  std::function<QString(QString* why)> experimentSource_;
  std::optional<wb::ladder::Ladder> ladder_;  // the open ladder
  QString ladderDir_;
  QString lastExportDir_;
  QString runsRoot_;
  nlohmann::json livePlan_;  // the running ladder's steps, with "status"
  bool ladderRunning_ = false;
};

}  // namespace wb::ui
