#pragma once
// The Experiments tab, beside Compare: the experiments that answer "which speedups pay here?"
// on the baseline's experiment. It leads with the open experiment's answer, large (its record's
// "answer", written by core; an older record keeps the line it had), with a button that uses the
// result (a try's setting, a greedy ladder's kept configuration, a search's best) and Back to
// the list. "Run ladder" runs `workbench-cli ladder` as a child process (its live plan step by
// step, numbered as its table numbers them, then its table, and its chart of speedups to the
// target on the Chart tab), "Open ladder…" shows a finished one, the Fastest tab runs
// `workbench-cli tune` (TuneView), and while no ladder is open the Ladder tab lists the ladders,
// tries and searches under the runs root (refreshList when one ends; double-click opens one and
// lists its runs as a group). Export writes the open ladder (html, md, csv, tex, json; the chart
// as png, svg, pdf).
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

class QCheckBox;
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
  // Shows the try in dir: its answer first (try.json's "answer", else its line in words), and
  // Use this setting when it was clearly faster. False with the reason in *error.
  bool openTry(const QString& dir, QString* error);
  // Shows the search in dir on the Fastest tab: its answer first (tune.json's "answer", else where
  // its finals are), and Use best. False with the reason in *error.
  bool openSearch(const QString& dir, QString* error);
  // Shows the try, ladder or search in dir, whichever its record says it is (wb/kinds), with its
  // runs as a group. False with the reason in *error (a folder that holds none names the records).
  bool openFolder(const QString& dir, QString* error);
  // Closes the open ladder or try: back to the experiments in the runs folder.
  void closeExperiment();
  // Reads the runs folder's experiments again (a ladder, try or search ended; one was deleted).
  void refreshList();
  // A try runs in dir / how far it is (the window's Try vs baseline): the answer line says so.
  void showRunningTry(const QString& dir, const QString& setting);
  void showTryProgress(const QString& text);
  // The sentence that leads the tab (the open experiment's answer, or what to do first).
  QString answerText() const;
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
  // Every experiment under the runs root, newest first: each folder holding the record of a kind
  // in wb/kinds/experiment_kinds.h, as (folder, the kind's name: "ladder" | "try" | "search").
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
  // "Use this setting" / "Use the kept setting": load this experiment file into the set-up; `what`
  // names the button in the question and the status bar.
  void useConfig(const QString& path, const QString& what);

 protected:
  void showEvent(QShowEvent* event) override;  // the Compare tab's target may have changed

 private:
  QWidget* buildAnswer();
  QWidget* buildControls();
  void setAnswer(const QString& text, const QString& useText = {}, const QString& usePath = {});
  void showLadderAnswer(const QString& fallback);
  QString keptConfigFile() const;
  void showQuestion();
  QWidget* buildTabs();
  void connectExperimentRunner();
  void openListed(int row);
  QString experimentFile(QString* why) const;
  QStringList ladderArguments(const QString& config) const;
  void showLadder();
  void showLaddersOnDisk();
  void showLadderTable();
  void showLivePlan();
  void setLadderTabText(const QString& text);
  void setRunning(bool running);
  bool isLadderStep(int index, const QString& key) const;
  void onRungStarted(int index, int steps, const QString& key);
  void onRungEnded(int index, const QString& key, const QString& status);
  void onLadderFinished(const QString& outDir, bool cancelled, const QString& error);

  RunsModel* model_;
  QPushButton* ladderButton_;
  QPushButton* stopLadderButton_;
  QPushButton* openLadderButton_;
  QPushButton* exportButton_;
  QCheckBox* details_;  // the open ladder's every figure, not its decisions alone
  QLabel* answer_;  // the open experiment's answer, large and first
  QPushButton* useButton_;
  QPushButton* backButton_;
  QString usePath_;   // what Use … loads ("kept": the open ladder's kept configuration, written on use)
  QString tryDir_;    // the try shown (open or running)
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
