#pragma once
// The workbench window: a composition of widgets that each own one job —
//   left:   SetupPanel (the experiment) and the Run button
//   right:  tabs "Live" (LivePlots), "Compare" (CompareView) and "Experiments" (ExperimentView:
//           Run ladder, Find fastest, the experiments on disk) over the RunsPanel.
// It owns the RunsModel, the RunQueue (runs launched here) and the RunHistory (the runs root),
// the menus and shortcuts (Run Ctrl+R, Stop Ctrl+., Export Ctrl+E, Tour F1), drops (a dataset
// folder, a run directory or an experiment JSON), settings (last set-up, baseline, layout), and
// the close policy (active runs: stop them, or quit once they finish — never leave them behind).
//
// Thread affinity: GUI thread.
#include <QHash>
#include <QMainWindow>
#include <QPointer>
#include <QTimer>

#include <nlohmann/json.hpp>

#include "compare/experiment_runner.h"
#include "window/theme.h"

class QAction;
class QProcess;
class QLabel;
class QPushButton;
class QSplitter;
class QTabWidget;

namespace wb::ui {

class AboutDialog;
class CompareView;
class ExperimentView;
class ExperimentRunner;
class HelpTour;
class LivePlots;
class Run;
class RunHistory;
class RunQueue;
class RunsModel;
class RunsPanel;
class SetupPanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  struct Options {
    QString runsRoot;              // empty: settings, else wb::defaultRunsRoot()
    bool useSettings = true;       // restore and save the last set-up, layout, baseline
    bool askBeforeUse = true;      // Use best asks before it changes the set-up (tests: off)
    bool queryCli = true;          // ask workbench-cli for capabilities at start
  };

  explicit MainWindow(const Options& options, QWidget* parent = nullptr);
  MainWindow() : MainWindow(Options{}) {}
  ~MainWindow() override;

  SetupPanel* setup() const { return setup_; }
  LivePlots* plots() const { return plots_; }
  CompareView* compare() const { return compare_; }
  ExperimentView* experiments() const { return experiments_; }
  RunsModel* runs() const { return runs_; }
  RunQueue* queue() const { return queue_; }
  RunHistory* history() const { return history_; }
  RunsPanel* runsPanel() const { return runsPanel_; }
  // Lists every run under an experiment's folder (a try's, a search's) and draws its answer's, and
  // only those with the baseline, on the plots (answerRuns in main_window.cpp). Returns how many
  // were listed.
  int openExperimentRuns(const QString& dir);
  // What opening the experiment file would change in the set-up, field by field in the schema's
  // words ("Precision: \"bf16-mixed\" → \"32-true\""); empty when nothing or unreadable.
  QStringList setupChanges(const QString& path) const;
  // Find fastest's Use best: asks with setupChanges() (unless Options::askBeforeUse is off), then
  // opens it and says what changed.
  void useBest(const QString& path) { useResult(path, QStringLiteral("Use best")); }
  // The same for any experiment's result (a try's setting, a ladder's kept one); `what` names the
  // button in the question and the status bar.
  void useResult(const QString& path, const QString& what);
  // What an Advisor button runs: workbench-cli `arguments` ("probe peak"; "probe workers" is the
  // set-up's worker probe).
  void runAdvice(const QString& arguments);
  QAction* runAction() const { return runAction_; }
  QAction* stopAction() const { return stopAction_; }
  QAction* exportAction() const { return exportAction_; }

  // What Run does: queues the set-up (refused with the errors in the status bar when invalid).
  Run* runExperiment();
  // "Try vs baseline": the baseline's config (the set-up with every speedup off when there is no
  // baseline run) against the same with only speedup `key` changed (wb::ladder::withOneSpeedup),
  // run by parts (or as pairs) through `workbench-cli try` (tryRunner()) into
  // <runs root>/<id>-try-<key>/, or into the folder of the same try cut short (continued: it says
  // what it reuses). While it runs, its row and the Experiments tab say its phase, n of N and the
  // time so far; when it ends the Experiments tab leads with its answer and the speedup's row
  // gives its measured effect; a cancelled one says so and what trying it again reuses. Its
  // internal runs stay out of the runs list. False, with the reason in the status bar, when it
  // cannot start.
  bool trySpeedup(const QString& key);
  // Stops the running try (Cancel try, Stop all, Stop run on one of its runs): the pair under
  // way is cut, the finished ones are kept and counted in its try.json.
  void cancelTry();
  ExperimentRunner* tryRunner() const { return tryRunner_; }
  bool openExperiment(const QString& path, QString* error = nullptr);
  bool saveExperiment(const QString& path, QString* error = nullptr);
  // With Your script set, the experiment file Run ladder and Find fastest start from (the
  // set-up's, written with its command; "" with *why when it cannot be); else "" (the baseline's).
  QString searchExperiment(QString* why);
  // A dropped or command-line path: run directory, dataset folder or experiment JSON.
  bool openPath(const QString& path);
  void setRunsRoot(const QString& root);
  void setTheme(Theme theme);
  Theme theme() const { return theme_; }
  void showMessage(const QString& text);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  bool openExperimentFolder(const QString& dir);
  void onTryFinished(const QString& outDir, bool cancelled, const QString& error);
  void onTryProgress(const QString& line);
  void buildActions();
  void buildFileMenu();
  void buildRunMenu();
  void buildViewMenu();
  void buildLayout();
  void fitScreen();
  void restoreSettings();
  void saveSettings();
  void stopSelectedOrNewest();
  void updateActions();
  // File → Export: the Experiments tab's ladder while that tab is current and has one, else the comparison.
  bool exportsExperiment() const;
  void updateExportAction();
  void connectExperiments();
  void onRunFinished(Run* run);
  void showAbout();
  void showTour();

  Options options_;
  RunsModel* runs_;
  RunQueue* queue_;
  RunHistory* history_;
  SetupPanel* setup_;
  LivePlots* plots_;
  CompareView* compare_;
  ExperimentView* experiments_;
  ExperimentRunner* tryRunner_;
  QString tryRow_;  // the speedup key of the running try
  QString tryKey_;  // the speedup the running try measures
  QString tryOut_;  // the running (or last) try's folder
  QTimer tryTick_;  // the running try's elapsed time, each second
  CutExperiment cutTry_;  // the last try started: continued by the same Try while cut
  QProcess* adviceProcess_ = nullptr;  // an Advisor button's command
  QString adviceArgs_;
  RunsPanel* runsPanel_;
  QTabWidget* viewTabs_;
  QSplitter* hsplit_;
  QSplitter* vsplit_;
  QPushButton* runButton_;
  QLabel* rootLabel_;
  QAction* runAction_;
  QAction* stopAction_;
  QAction* stopAllAction_;
  QAction* sideBySideAction_;
  QAction* exportAction_;
  QPointer<AboutDialog> about_;
  QPointer<HelpTour> tour_;
  Theme theme_ = Theme::System;
  bool quitWhenIdle_ = false;
};

// The application icon (theme icon, installed file, or the source tree's); null when absent.
QIcon applicationIcon();

}  // namespace wb::ui
