#pragma once
// Every run the window knows (launched here, found under the runs root, or opened from
// elsewhere), as a table: name (checkable: shown on the plots; a warning icon when the run was
// measured under CPU contention), status, progress with ETA, train samples/s (training steps
// only), best val acc, and two speedups against the baseline, each named for what it measures:
// "× throughput" (train samples/s) and "× to target" (time to the baseline's best val acc, as
// the Compare tab's chart). Both are core's comparison (wb::compare::compareRuns) of every
// finished run against the baseline: repeats of one configuration grouped, each speedup with
// its verdict by the product's rule (minEffect(); "1.85× faster", "1.02× noise", "1.26× 1 run"),
// the verdict in words, the 95 % interval in the tooltip. A run
// that gets no speedup (unfinished, on other data, contended, host speed changed, a repeat of
// the baseline) shows a word for why, the reason in the tooltip. Newest first.
//
// Names: a run is listed (and drawn, and compared) under what its config changed against the
// baseline's (wb::report::differenceName: "+ bf16", "workers 2"); a name the user gave it wins;
// runs that would read alike carry their start time.
//
// The list other widgets build on: the plots draw shownRuns() + baseline(), the Compare tab
// compares shownRuns() against baseline(). Signals say when any of that changes.
//
// Thread affinity: GUI thread. Ownership: the model owns its Runs (deleted on removeRun).
#include <QAbstractTableModel>
#include <QHash>
#include <QPointer>
#include <QVector>

#include <optional>

#include "runs/run.h"
#include "wb/compare/compare.h"

namespace wb::ui {

class RunsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { ColName, ColStatus, ColProgress, ColThroughput, ColBestAcc, ColSpeedupThroughput, ColSpeedupTarget, ColumnCount };
  enum Role { RunRole = Qt::UserRole + 1, ProgressRole, SortRole };

  explicit RunsModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  // A column's header; `compact`: the short one a narrow list shows (the tooltip says it whole).
  static QString headerText(int section, bool compact);
  void setCompactHeaders(bool compact);
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
  // The verdicts' practical threshold (the Compare tab's "Smallest effect"; 0.02 = 2 %).
  double minEffect() const { return minEffect_; }
  void setMinEffect(double minEffect);

  // Speedup of run's training throughput over the baseline's (NaN when either is unknown, or
  // when the run has no speedup: see noSpeedupReason).
  double speedupVsBaseline(const Run* run) const;
  // Speedup to the baseline's best val acc: the baseline's time to it / the run's (NaN when
  // either is unknown or not reached, or when the run has no speedup).
  double speedupToTarget(const Run* run) const;
  // Why run gets no speedup at all ("" when it gets one): no baseline, it or the baseline has
  // not finished, or core's reason (ComparisonRow::noSpeedupReason).
  QString noSpeedupReason(const Run* run) const;
  // run's row of the comparison against the baseline (null without a baseline, for the
  // baseline itself, and for a run not finished).
  const compare::ComparisonRow* comparisonRow(const Run* run) const;

  // The name the window shows for run (list, legends, charts, exports): see the header.
  QString displayName(const Run* run) const;

  static QString formatEta(double seconds);

 Q_SIGNALS:
  void runAdded(wb::ui::Run* run);
  void runAboutToBeRemoved(wb::ui::Run* run);
  void shownChanged(wb::ui::Run* run, bool shown);
  void baselineChanged(wb::ui::Run* baseline);

 private:
  void onRunChanged(Run* run);
  void updateNames() const;
  QVariant displayText(const Run* run, int col) const;
  QVariant toolTip(const Run* run, int col) const;
  QString speedupText(const Run* run, int col) const;
  QString speedupTip(const Run* run, int col) const;

  QString comparisonKey() const;
  void updateComparison() const;
  const stats::SpeedupEstimate* estimateFor(const Run* run, int col) const;

  QVector<Run*> runs_;
  // The comparison behind the speedup cells, recomputed on the next read after it goes stale: a
  // run added or removed, another baseline, or a change of comparisonKey() (a run ends, reads its
  // evaluations) seen when a run changes.
  mutable std::optional<compare::Comparison> comparison_;
  double minEffect_ = stats::kDefaultMinEffect;
  mutable bool comparisonStale_ = true;
  mutable QString comparisonKey_;
  mutable QHash<const Run*, int> comparisonRows_;  // run → index into comparison_->rows
  mutable QHash<const Run*, QString> names_;  // displayName, recomputed when namesStale_
  mutable QHash<QString, QString> experimentOf_;  // run folder → its experiment's folder ("" none)
  QHash<const Run*, nlohmann::json> experimentReferences(const nlohmann::json& reference) const;
  mutable bool namesStale_ = true;
  QVector<Run*> shown_;
  QPointer<Run> baseline_;
  bool compactHeaders_ = false;
};

}  // namespace wb::ui
