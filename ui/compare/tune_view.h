#pragma once
// The Experiments tab's "Fastest" page: Find fastest runs `workbench-cli tune --events-stdout` on the
// baseline's config as one child process (through ExperimentRunner: the same process handling, the
// same events for the finals' runs), shows its progress (trials done, about how long is left),
// and at the end its finals table (tune's own, wb/tune/tune.h: speedup to the target with the
// interval, the verdict against the best), the best and what cannot be told from it. "Use best"
// hands best.json to the set-up. Stop keeps what finished; the same search continues on the
// folder when run again (Open… shows a finished one).
//
// Thread affinity: GUI thread.
#include <QString>
#include <QStringList>
#include <QWidget>

#include "compare/experiment_runner.h"

#include <functional>

class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace wb::ui {

class ExperimentRunner;

class TuneView : public QWidget {
  Q_OBJECT
 public:
  explicit TuneView(QWidget* parent = nullptr);

  // What to search from: the config file (empty: none, with the reason in *why).
  void setConfigSource(std::function<QString(QString* why)> source) { configSource_ = std::move(source); }
  // The target's arguments ("--target-acc 0.135", or none on auto), asked at each search's start.
  void setTargetSource(std::function<QStringList()> source) { targetSource_ = std::move(source); }
  void setRunsRoot(const QString& root) { runsRoot_ = root; }
  // More `tune` options after the window's own (--only, --max-pairs ...: a narrower search).
  void setSearchArguments(const QStringList& args) { searchArgs_ = args; }
  ExperimentRunner* runner() const { return runner_; }
  // Starts the search (ignored while one runs); false with the reason shown when there is no config.
  bool findFastest();
  // Shows the search in dir (its tune.json); false with the reason in *error.
  bool open(const QString& dir, QString* error);
  // What is shown: the folder, and best.json when the search picked one.
  const QString& dir() const { return dir_; }
  QString bestConfig() const;

 Q_SIGNALS:
  // "Use best": load this config (best.json) into the set-up.
  void useConfig(const QString& path);
  // A line for the status bar.
  void status(const QString& line);

 private:
  void onFinished(const QString& outDir, bool cancelled, const QString& error);
  void setRunning(bool running);

  ExperimentRunner* runner_;
  std::function<QString(QString*)> configSource_;
  std::function<QStringList()> targetSource_;
  CutExperiment cut_;  // the last search started: continued by Find fastest while cut
  QString runsRoot_, dir_;
  QStringList searchArgs_;
  QPushButton* find_;
  QPushButton* stop_;
  QPushButton* use_;
  QSpinBox* budget_;
  QLabel* summary_;
  QTableWidget* table_;
};

}  // namespace wb::ui
