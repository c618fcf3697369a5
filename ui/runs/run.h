#pragma once
// One run as the window sees it: what its events said so far (status, progress, curves, error).
// A Run is fed by exactly one source: a RunProcess (launched from the window), a RunFollower
// (a growing events.jsonl) or a one-off load of a finished run directory.
//
// Thread affinity: GUI thread only (every producer appends from the GUI thread).
// Ownership: a RunsModel owns its Runs (QObject parent).
#include <QObject>
#include <QString>
#include <QStringList>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/proto/run_summary.h"
#include "wb/compare/compare.h"
#include "wb/records/run_record.h"

namespace wb::ui {

enum class RunStatus { Queued, Starting, Running, Stopping, Ok, Failed, Cancelled, EarlyStopped, Diverged, Incomplete };

// "queued", "running", "ok", "early-stopped", ... (the words of the contract).
QString statusWord(RunStatus status);
// End-event / summary.json status string to a status (unknown words -> Failed).
RunStatus statusFromString(const std::string& status);
bool isFinal(RunStatus status);
bool isActive(RunStatus status);  // starting, running or stopping

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Step-time components, in the order of the contract's ms{...}.
inline constexpr std::array<const char*, 6> kStepParts = {"data", "h2d", "fwd", "bwd", "opt", "comm"};

struct StepPoint {
  double step = kNaN, epoch = kNaN, t = kNaN, samples = kNaN;
  double loss = kNaN, lr = kNaN, samplesPerS = kNaN;
  std::array<double, 6> ms{kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  double alloc = kNaN, reserved = kNaN, peak = kNaN, rss = kNaN;
  double ampScale = kNaN;
  double gflopPerS = kNaN, pctOfPeak = kNaN, pctOfDatasheet = kNaN;  // the step event's flops
};

// What a curve's x can be: a point's step, epoch, wall time or samples seen.
enum class XKey { Step, Epoch, Wall, Samples };

struct EvalPoint {
  double step = kNaN, epoch = kNaN, t = kNaN, samples = kNaN;
  double valLoss = kNaN, valAcc = kNaN;
};

// Rank 0's curves (the contract: curves use rank 0), appended in arrival order, as plot points
// (NaN where an event had no value). Decoded by core/records (wb::records::decodeStep), so the
// plots and the comparison read the same numbers.
class RunSeries {
 public:
  void addStep(const records::StepSample& step);
  void addEval(const records::EvalSample& eval, double samples);
  // Direct append (benchmarks and tests that build large series without JSON).
  void appendStep(const StepPoint& p);
  void appendEval(const EvalPoint& p) { evals_.push_back(p); }
  void setStepsPerEpoch(double spe) { stepsPerEpoch_ = spe; }
  void setDevice(const QString& device) { device_ = device; }
  void clear();

  const std::vector<StepPoint>& steps() const { return steps_; }
  const std::vector<EvalPoint>& evals() const { return evals_; }
  // The steps' x under one key, side by side: a curve whose x axis changes reads 8 bytes a point
  // instead of a wide point's cache line.
  const std::vector<double>& stepKeys(XKey key) const { return stepKeys_[size_t(key)]; }
  double stepsPerEpoch() const { return stepsPerEpoch_; }
  const QString& device() const { return device_; }
  bool onCuda() const { return device_.startsWith(QLatin1String("cuda")); }
  bool hasAmpScale() const { return hasAmpScale_; }

 private:
  std::vector<StepPoint> steps_;
  std::array<std::vector<double>, 4> stepKeys_;  // by XKey
  std::vector<EvalPoint> evals_;
  double stepsPerEpoch_ = 0;
  QString device_;
  bool hasAmpScale_ = false;
};

class Run : public QObject {
  Q_OBJECT
 public:
  enum class Origin { Launched, History };

  explicit Run(Origin origin, QObject* parent = nullptr);

  // Reads config.json and summary.json of a run directory (events are loaded on demand).
  // Returns nullptr when dir is not a run directory.
  static Run* fromDirectory(const QString& dir, QObject* parent = nullptr);

  Origin origin() const { return origin_; }
  const QString& runDir() const { return runDir_; }
  void setRunDir(const QString& dir) { runDir_ = dir; }
  QString runId() const;
  const QString& name() const { return name_; }
  void setName(const QString& name);
  RunStatus status() const { return status_; }
  // Error text for a failed run (the error event's message, or what the driver saw).
  const QString& errorMessage() const { return error_; }
  // Last lines of the rank logs / stderr (shown with a failed run).
  const QString& logTail() const { return logTail_; }
  const QStringList& warnings() const { return warnings_; }
  const nlohmann::json& config() const { return config_; }
  void setConfig(const nlohmann::json& config) { config_ = config; }
  const proto::RunSummary& summary() const { return summary_; }  // empty until the run has one

  double progress() const { return progress_; }       // 0..1, NaN when unknown
  double etaSeconds() const { return eta_; }          // NaN when unknown
  // Training throughput (samples/s over training steps only, no evaluation or set-up):
  // summary.train_samples_per_s once the run has it; before that, and for runs written before
  // it existed, the epoch events' (train_)samples_per_s, else the latest step event's. The older
  // summary.samples_per_s (steps + evaluation) is never taken. NaN when unknown.
  double trainSamplesPerSecond() const;
  // Whether another process shared the CPU while the run was measured (summary.cpu; before the
  // summary, a one-rank run's step events' cpu), and how much: "another process used 0.9 of 2
  // cores". Its speedups are not valid.
  bool contended() const { return !contention_.isEmpty(); }
  const QString& contentionNote() const { return contention_; }
  // The cluster job that runs it, when it was sent to Slurm as an array task
  // (wb/proto/cluster_jobs.h): Slurm's id ("12_3"), state (PENDING, RUNNING, ...) and reason.
  const QString& clusterJob() const { return clusterJob_; }
  const QString& clusterState() const { return clusterState_; }
  const QString& clusterReason() const { return clusterReason_; }
  void setClusterTask(const QString& job, const QString& state, const QString& reason);
  double bestValAcc() const { return bestValAcc_; }   // 0..1, NaN before the first eval
  double lastEventWall() const { return lastWall_; }  // unix seconds of the newest event

  const RunSeries& series() const { return series_; }
  // Rank 0's evaluations as core/records decoded them (time to a target accuracy is read here).
  const std::vector<records::EvalSample>& evalSamples() const { return record_.evals; }
  RunSeries& mutableSeries() { return series_; }
  // The run as core/records sees it, from the events this Run ingested (no file is read again
  // but env.json, once): what the Compare tab compares. config and summary as this Run has them.
  records::RunRecord record() const;
  // Mean step-time split after the warm-up interval (core/compare's rule); nullopt before any.
  std::optional<records::StepTimes> meanStepTimes() const { return compare::meanStepTimes(record_.steps); }

  // Feeds events (in order). Emits changed() once, and dataAppended() when curves grew.
  void ingest(const nlohmann::json& event);
  void ingest(const std::vector<nlohmann::json>& events);

  // Status set by whoever drives the run (queue, process driver, follower). detail: the error
  // message for failed runs (kept when empty).
  void setStatus(RunStatus status, const QString& detail = QString());
  void appendLogTail(const QString& text);

  // History runs: loads events.jsonl once (no-op for launched or already loaded runs).
  void ensureEventsLoaded();
  bool eventsLoaded() const { return eventsLoaded_; }
  void markEventsLoaded() { eventsLoaded_ = true; }

 Q_SIGNALS:
  void changed();
  void dataAppended();

 private:
  bool ingestOne(const nlohmann::json& ev);  // true when curves grew
  void applySummary(const proto::RunSummary& summary);
  void noteStepCpu(const nlohmann::json& stepEvent);

  Origin origin_;
  QString runDir_;
  QString name_;
  RunStatus status_ = RunStatus::Queued;
  QString error_;
  QString logTail_;
  QStringList warnings_;
  nlohmann::json config_ = nlohmann::json::object();
  proto::RunSummary summary_;
  bool hasSummary_ = false;                       // summary.json or the end event's was applied
  double progress_ = kNaN, eta_ = kNaN, bestValAcc_ = kNaN, lastWall_ = kNaN;
  double summaryTrainSps_ = kNaN, epochTrainSps_ = kNaN, stepTrainSps_ = kNaN;  // newest of each
  QString contention_;
  QString clusterJob_, clusterState_, clusterReason_;
  bool summaryCpu_ = false;                       // summary.cpu decides; step events no longer do
  compare::StepLoad stepLoad_;
  bool eventsLoaded_ = false;
  RunSeries series_;
  records::RunRecord record_;                      // every event ingested, decoded by core/records
  mutable nlohmann::json env_ = nlohmann::json::object();  // env.json, read once it exists
};


}  // namespace wb::ui
