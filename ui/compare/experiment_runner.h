#pragma once
// Runs an experiment of many runs, `workbench-cli ladder --events-stdout`, `try --events-stdout`
// or `tune --events-stdout` (the same runner, core/experiment, so the same stream; tune adds its
// `tune` and `trial_end` events), as one child process
// (the window never links the trainer) through RunProcess: its own process group, a watchdog for
// a hung child, SIGTERM then SIGKILL of the group after a grace period, never an orphan, exactly
// one end. The events (wb/ladder/ladder_run.h, wb/experiment/try.h) say where it writes
// (`ladder`; try: its --out), each run it starts and ends (`rung_start`, `rung_end`), each pair
// (`pair_end`, with the estimate so far) and how it ended (`end`, with ladder.json's or
// try.json's content); nothing is read from its human text. cancel() asks it to stop its current
// run and write what it measured (a cut pair gives nothing; the same command continues it).
//
// Thread affinity: GUI thread.
#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

#include "wb/kinds/experiment_kinds.h"

namespace wb::ui {

class RunProcess;

// An experiment a runner started: its folder, its arguments but --out, and its config file's
// bytes. One cut short is continued by the same command on the same experiment and options
// (the CLI's rule: the same --out continues it); anything else starts a new one.
struct CutExperiment {
  QString dir;
  QStringList args;
  QByteArray config;
  bool continues(const CutExperiment& asked) const;
};
// A file's bytes ("" when it cannot be read).
QByteArray readAll(const QString& path);
// A ladder plan's steps numbered as its table numbers them (wb::ladder::ladderTable): the
// baseline 0, each cumulative step the next, a step alone "alone", the configuration kept "kept".
QStringList stepNumbers(const nlohmann::json& plan);

class ExperimentRunner : public QObject {
  Q_OBJECT
 public:
  // command: an experiment kind's id (wb/kinds/experiment_kinds.h): "ladder", "try" or "tune".
  explicit ExperimentRunner(QObject* parent = nullptr, const QString& command = QLatin1String(wb::kinds::kLadder));
  ~ExperimentRunner() override;

  // arguments: after "<command> --events-stdout" (e.g. --config F --out DIR). program: workbench-cli.
  // Ignored while a ladder runs.
  void start(const QString& program, const QStringList& arguments);
  void cancel();
  bool isRunning() const;
  // Where the ladder writes (from its `ladder` event); empty before it said so.
  const QString& outDir() const { return outDir_; }
  // The runs that ended so far: "workers: ok", in order (tests, the summary line).
  const QStringList& rungsEnded() const { return rungsEnded_; }
  // The last start()'s arguments after the program ("ladder --events-stdout …").
  const QStringList& arguments() const { return arguments_; }
  // The plan the ladder announced (its `ladder` event's steps: key, added, skipped, note); null before.
  const nlohmann::json& plan() const { return plan_; }
  // The `end` event's result (ladder.json's ladder, or try.json); null before the end.
  const nlohmann::json& result() const { return result_; }
  // How far it got, never backwards (the runner revisits steps in rounds, so the running step's
  // index jumps): steps done (skipped by the plan, or no more pairs: pair_end's `settled`; the
  // baseline with the last of them) of the plan's steps, and the time since start():
  // "3/8 steps done · 2 min 10 s".
  // The newest pair's estimate so far, in words ("2 pair(s): 1.21× [1.05, 1.40] faster on wall
  // time"); "" before the first pair ends.
  const QString& pairsSoFar() const { return pairsSoFar_; }
  // What a try by parts (or a ladder's step by parts) measures now, from its `phase` events, with
  // n of N where it counts runs: "the experiment's reference runs: 2 of 5 done"; "" before the
  // first and once a step of the plan starts anew. While one is under way its internal pairs
  // (short trials) are no estimate: pairsSoFar() stays as it was.
  const QString& phase() const { return phase_; }
  int stepsDone() const;
  // The time since start(): "2 min 10 s".
  QString elapsedText() const;
  int stepsPlanned() const;
  QString progressText() const;

 Q_SIGNALS:
  // What the ladder is doing, in words: "step 1 of 0-7: loader workers 0 → 2".
  void progress(const QString& line);
  // The plan arrived (plan() holds it), a rung began in runDir, a rung ended with its status
  // ("ok", "failed", "not-started", …): the window shows the rungs as they run.
  void planned(const QString& outDir);
  void rungStarted(int index, int steps, const QString& key, const QString& runDir);
  void rungEnded(int index, const QString& key, const QString& runDir, const QString& status);
  // Exactly once per start(). outDir may be empty when the ladder failed before creating it.
  // error: in words, empty on success and on cancel.
  void finished(const QString& outDir, bool cancelled, const QString& error);

 private:
  void onEvent(const nlohmann::json& event);
  void onFinished(int outcome, const QString& status, const QString& message);

  RunProcess* process_ = nullptr;
  QString outDir_;
  QStringList rungsEnded_;
  QStringList arguments_;
  nlohmann::json plan_;
  nlohmann::json result_;
  QString command_;
  QSet<QString> settled_;  // steps that take no more pairs
  QElapsedTimer clock_;
  QString failedRung_;  // the last rung that did not end ok, in words
  QString endStatus_;   // the `end` event's status
  QString pairsSoFar_;
  QString phase_;
  int trialsDone_ = 0;  // tune's trial_end events
};

}  // namespace wb::ui
