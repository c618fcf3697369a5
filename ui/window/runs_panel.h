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

 Q_SIGNALS:
  void currentRunChanged(wb::ui::Run* run);
  void message(const QString& text);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void sizeColumns();
  void showContextMenu(const QPoint& pos);
  void updateDetails();

  RunsModel* model_;
  RunQueue* queue_;
  QTableView* view_;
  QPlainTextEdit* details_;
  QSplitter* split_;
};

}  // namespace wb::ui
