#pragma once
// Every run the window knows (launched here, found under the runs root, or opened from
// elsewhere), as a table: name (checkable: shown on the plots; a warning icon when the run was
// measured under CPU contention), status, progress with ETA, train samples/s (training steps
// only), best val acc, train-throughput speedup vs the baseline ("contended" instead when the
// run or the baseline shared its CPU). Newest first.
//
// The list other widgets build on: the plots draw shownRuns() + baseline(), the Compare tab
// compares shownRuns() against baseline(). Signals say when any of that changes.
//
// Thread affinity: GUI thread. Ownership: the model owns its Runs (deleted on removeRun).
#include <QAbstractTableModel>
#include <QPointer>
#include <QVector>

#include "runs/run.h"

namespace wb::ui {

class RunsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { ColName, ColStatus, ColProgress, ColThroughput, ColBestAcc, ColSpeedup, ColumnCount };
  enum Role { RunRole = Qt::UserRole + 1, ProgressRole, SortRole };

  explicit RunsModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

  // Takes ownership. atTop: newest first (launched runs); false appends (history scan order).
  void addRun(Run* run, bool atTop = true);
  // Removes and deletes the run (emits runAboutToBeRemoved first).
  void removeRun(Run* run);
  Run* runAt(int row) const;
  int rowOf(const Run* run) const;
  Run* findByDir(const QString& runDir) const;  // canonical absolute path
  const QVector<Run*>& runs() const { return runs_; }

  // Shown on the plots / compared (the Name column's check box).
  bool isShown(const Run* run) const;
  void setShown(Run* run, bool shown);
  QVector<Run*> shownRuns() const;

  Run* baseline() const { return baseline_; }
  void setBaseline(Run* run);  // nullptr clears

  // Speedup of run's training throughput over the baseline's (NaN when either is unknown, or
  // when either was measured under contention: see contentionVsBaseline).
  double speedupVsBaseline(const Run* run) const;
  // Why run's speedup is not valid ("" when it is): its own or the baseline's contention.
  QString contentionVsBaseline(const Run* run) const;

  static QString formatEta(double seconds);

 Q_SIGNALS:
  void runAdded(wb::ui::Run* run);
  void runAboutToBeRemoved(wb::ui::Run* run);
  void shownChanged(wb::ui::Run* run, bool shown);
  void baselineChanged(wb::ui::Run* baseline);

 private:
  void onRunChanged(Run* run);

  QVector<Run*> runs_;
  QVector<Run*> shown_;
  QPointer<Run> baseline_;
};

}  // namespace wb::ui
