#pragma once
// The Compare tab's early-stopping what-if (wb/report/whatif.h): for the chosen run (the
// baseline or a ticked run), what each patience (0 = off … 5) and min_delta (0, 0.001, 0.01)
// would have done: the epoch it stops after, the best epoch it keeps, the weights it ends with
// and the wall time saved, from the run's own evaluations, without training again. A run with
// fewer than two evaluations says so instead of a table.
// Thread affinity: GUI thread. Ownership: QObject tree.
#include <QWidget>

#include <vector>

#include "wb/records/run_record.h"
#include "wb/report/whatif.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace wb::ui {

class WhatIfView : public QWidget {
  Q_OBJECT
 public:
  explicit WhatIfView(QWidget* parent = nullptr);
  // The runs it offers (the baseline first); keeps the chosen run when it is still there.
  void setRuns(const std::vector<const wb::records::RunRecord*>& runs);
  // What is shown (tests).
  const QTableWidget* table() const { return table_; }
  const QLabel* summary() const { return summary_; }
  QComboBox* runChooser() const { return runs_; }

 private:
  void showRun(int index);

  QComboBox* runs_;
  QLabel* summary_;
  QTableWidget* table_;
  std::vector<wb::report::WhatIf> whatIfs_;
  QString chosen_;  // the run the user picked: kept across refreshes while it is offered
};

}  // namespace wb::ui
