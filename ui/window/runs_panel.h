#pragma once
// The runs list: the RunsModel as a table (progress bars with ETA), its actions — Stop
// (graceful, then kill after the grace period), Rename, Delete (asks), Set as baseline, Open
// folder — and a details pane that shows the selected run's error, log tail and warnings.
//
// Thread affinity: GUI thread. The model and queue outlive the panel.
#include <QWidget>

class QAction;
class QLabel;
class QPlainTextEdit;
class QSplitter;
class QTableView;

namespace wb::ui {

class Run;
class RunQueue;
class RunsModel;

class RunsPanel : public QWidget {
  Q_OBJECT
 public:
  RunsPanel(RunsModel* model, RunQueue* queue, QWidget* parent = nullptr);

  Run* currentRun() const;
  void selectRun(Run* run);
  QTableView* view() const { return view_; }

  // The actions (also used by the window's menus).
  void stopRun(Run* run);
  void renameRun(Run* run, const QString& newName);  // no dialog (tests); finished runs: summary.json
  void renameRunInteractive(Run* run);
  bool deleteRun(Run* run, bool ask = true);
  void setBaseline(Run* run);
  void openFolder(Run* run);
  // The plots' runs as a group: only `run` (and the baseline), none, or the runs of `run`'s
  // experiment (a ladder's, try's or search's folder under the runs folder) besides those shown.
  void showOnly(Run* run);
  void hideAll();
  void showExperimentOf(Run* run);
  // The experiment folder a run belongs to (the runs folder's child it lies under); "" for a
  // run of its own.
  QString experimentOf(const Run* run) const;

 Q_SIGNALS:
  void currentRunChanged(wb::ui::Run* run);
  void message(const QString& text);

 protected:
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void sizeColumns();
  void fitFigureColumns();
  void fitClusterStatus(int first, int last);
  void showContextMenu(const QPoint& pos);
  void updateDetails();

  RunsModel* model_;
  RunQueue* queue_;
  QTableView* view_;
  QPlainTextEdit* details_;
  QSplitter* split_;
  bool sized_ = false, compact_ = false;  // the figure columns: sized yet; to their values (not their headers)
};

}  // namespace wb::ui
