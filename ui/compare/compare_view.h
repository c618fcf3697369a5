#pragma once
// The Compare tab (issue 6): each shown run against the baseline (time to the target accuracy,
// speedups, Δ accuracy, memory), the ladder chart, and File → Export.
//
// This is the slot the main window embeds; its internals belong to the comparison work.
// Inputs: the RunsModel — model->shownRuns() are the runs to compare, model->baseline() the
// baseline (nullptr until the user sets one), each Run's runDir() the directory to read with
// core/report; RunsModel::shownChanged / baselineChanged / runAdded / runAboutToBeRemoved and
// Run::changed (status, end of run) say when to recompute.
//
// Thread affinity: GUI thread. Ownership: QObject tree; the model outlives the view.
#include <QWidget>

class QLabel;

namespace wb::ui {

class RunsModel;

class CompareView : public QWidget {
  Q_OBJECT
 public:
  explicit CompareView(RunsModel* model, QWidget* parent = nullptr);

  // File → Export (Ctrl+E): asks where and in which format, writes the comparison.
  void exportDialog();
  // Whether exportDialog() has something to write (the window enables File → Export with it).
  bool canExport() const;

 Q_SIGNALS:
  void canExportChanged(bool canExport);

 private:
  void refresh();

  RunsModel* model_;
  QLabel* summary_;
};

}  // namespace wb::ui
