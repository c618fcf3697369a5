#pragma once
// One rank's training run, in the steps Trainer::run() takes (training_run.cpp):
//   setUp()       machine (threads, device, seed), data, model, optimiser, schedule
//   resume()      the position, weights and states of a checkpoint
//   emitStart()   the `start` event: what runs, and which speedups are active (step_events.cpp)
//   per epoch:    trainEpoch() -> evaluateAndCheckpoint() (evaluation.cpp for the evaluation)
//   finish()      best weights back after early stopping; the outcome and its summary
// Private to wb_train. Thread affinity: the training thread.
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "wb/common/clock.h"
#include "wb/data/dataset.h"
#include "wb/data/loader.h"
#include "wb/model/flop_counter.h"
#include "wb/model/model.h"
#include "wb/proto/event_types.h"
#include "wb/train/backend_check.h"
#include "wb/train/batch_copy.h"
#include "wb/common/early_stopping.h"
#include "wb/train/grad_scaler.h"
#include "wb/train/host_use.h"
#include "wb/train/optim.h"
#include "wb/train/step_timer.h"
#include "wb/train/replica_group.h"
#include "wb/train/trainer.h"

namespace wb::train::detail {

// Memory as the `step`/`eval` events report it: device allocator figures on CUDA, RSS on CPU.
proto::MemoryPart memoryUse(const torch::Device& device);
void resetPeakMemory(const torch::Device& device);

struct EvalResult {
  double loss = 0;
  double acc = 0;
  int64_t samples = 0;
  double ms = 0;
  proto::MemoryPart mem;
};

// Evaluation over this rank's shard of the validation set; the sums are reduced across ranks.
EvalResult evaluate(model::Model& model, data::Loader& loader, BatchCopier& copier, const torch::Device& device,
                    bool inference, bool bf16, ReplicaGroup& group);

// Where the run is: what a checkpoint saves and a resume restores.
struct Position {
  int epoch = 0;                  // the epoch a resume starts in (0-based)
  int64_t batch_in_epoch = 0;     // batches of it already trained
  int64_t iteration = 0;          // training steps taken, over every life of the run
  int64_t optimizer_steps = 0;    // steps that moved the weights (fp16 skips overflowing ones)
  int64_t samples_seen = 0;       // global samples, over every life of the run
  double best_metric = std::nan("");
};

// Why the loop stopped before its last epoch.
enum class Stop { None, Cancelled, MaxSteps, Diverged, EarlyStopped, ReachedTarget };

// Where a batch stands in its optimiser step (speedups.grad_accumulation): the first micro-batch
// clears the gradients, the last one reduces them across ranks and steps the optimiser.
struct Micro {
  bool first = true, last = true;
  int count = 1;  // micro-batches per step: each one's loss is divided by it
};

class TrainingRun {
 public:
  TrainingRun(const TrainerOptions& options, proto::EventSink& sink);
  ~TrainingRun();
  Result<TrainOutcome> run();

 private:
  // ---- the steps (training_run.cpp)
  Status setUp();
  Status openData();
  Status buildModel();
  Status resume();
  void startLoop();
  Status trainEpoch(int epoch);
  void trainStep(const data::Batch& batch);
  Micro microOf(int64_t batchInEpoch) const;
  bool computeStep(const torch::Tensor& x, const torch::Tensor& y, StepTimer& timer, torch::Tensor& loss,
                   const Micro& micro = Micro());
  int64_t optimizerStepsPerEpoch() const;
  void applyCudaLevers();
  void layOutChannelsLast();
  void countFlops();
  void measureComputeOnly();
  Status evaluateAndCheckpoint(int epoch);
  bool evaluationDue() const;
  void evaluateWithinEpoch(int epoch);
  void recordEvaluation(const EvalResult& ev);
  bool reachedTarget(double valAcc);
  void restoreBestWeights();
  TrainOutcome finish();

  // ---- stopping
  bool stopRequested() const;
  bool stopAgreed();
  std::optional<std::string> fp16Divergence(bool readScale) const;
  bool checkDiverged();
  void stop(Stop why) { stop_ = why; }

  // ---- checkpoints (training_run.cpp)
  Status writeCheckpoint(const std::string& kind, int epoch, int64_t batchInEpoch);
  void checkpoint(const std::string& kind, int epoch, int64_t batchInEpoch);
  void settleCheckpoints();

  // ---- events (step_events.cpp)
  nlohmann::json event(const std::string& type) const;
  void emit(const nlohmann::json& ev);
  void warn(const std::string& message, const std::string& path = "");
  void emitStart();
  void warnDataProblems();
  std::map<std::string, proto::SpeedupStatus> speedups() const;
  void leverStatuses(std::map<std::string, proto::SpeedupStatus>& s) const;
  void emitStep(int epoch);
  void emitEval(int epoch, const EvalResult& ev);
  void emitEvalAndEpoch(int epoch, const EvalResult& ev, bool epochComplete);
  void emitEarlyStop(int epoch, const EarlyStoppingDecision& decision);
  proto::RunSummary summary() const;
  proto::FlopsFigures flopsFigures(double samples, double ms) const;  // step events\' and summary\'s "flops"

  const TrainerOptions& o_;
  const Config& c_;
  proto::EventSink& sink_;
  Stopwatch clock_;  // the events' clock: from the trainer's start

  // set up
  torch::Device device_{torch::kCPU};
  bool cuda_ = false;
  std::string memoryNote_;
  BackendCheck backend_;  // the numerical self-check of this LibTorch build (start event)
  bool autoThreads_ = false;
  int threads_ = 1;
  data::Splits splits_;
  int imageSize_ = 0;
  bool pinActive_ = false;
  // What each lever past the recipe's seven did here (start event), set where it is applied.
  std::map<std::string, proto::SpeedupStatus> levers_;
  bool stopPending_ = false;  // agreed to stop; taken at the next optimiser-step boundary
  std::unique_ptr<data::Loader> trainLoader_, valLoader_;
  std::unique_ptr<BatchCopier> copier_;  // host to device (a side stream with pinned memory)
  std::unique_ptr<model::Model> net_;
  int64_t stepsPerEpoch_ = 0, totalSteps_ = 0;
  std::unique_ptr<ReplicaGroup> group_;  // the ranks; one process is a group of one
  std::unique_ptr<torch::optim::Optimizer> opt_;
  std::unique_ptr<LrSchedule> schedule_;
  bool bf16_ = false, fp16_ = false;
  std::unique_ptr<GradScaler> scaler_;
  std::unique_ptr<EarlyStopping> stopper_;
  bool writeCheckpoints_ = false;  // rank 0 of a run with a folder
  std::string ckDir_;

  // resumed
  Position at_;                    // advances as the run trains
  std::string resumeNote_;         // the checkpoint's global batch differs from this run's
  std::string fineTuneNote_;       // the checkpoint was trained on another dataset

  // the loop
  int64_t samplesAtStart_ = 0, iterationAtStart_ = 0;  // this life's start
  Stopwatch wall_;                 // the loop: steps + evaluation + checkpoints
  std::unique_ptr<StepTimer> timer_;
  std::unique_ptr<CpuMonitor> cpu_;
  double trainMs_ = 0, evalS_ = 0, checkpointS_ = 0;  // time in training steps; evaluation; checkpoints
  double firstStepAge_ = -1, firstStepUnix_ = 0;
  double hostBeforeMs_ = 0, hostAfterMs_ = 0;  // the host speed check (wb/train/host_speed.h)
  int64_t faultsAt_ = 0;
  torch::Tensor lossAcc_, epochLossAcc_;  // on the device, read at the log interval
  torch::Tensor firstBad_;  // first non-finite loss: {iteration, value}, tracked without a sync
  int64_t intervalSteps_ = 0, intervalSamples_ = 0;
  int64_t epochSteps_ = 0, epochSamples_ = 0, batchInEpoch_ = 0;
  double epochTrainMsAt_ = 0;
  Stopwatch epochClock_;
  int64_t streakStart_ = -1;  // fp16: first step of the current streak of overflowing steps
  double streakLoss_ = 0;

  // FLOPs (step_flops.cpp)
  std::optional<model::FlopCount> flops_;  // one forward on a batch of train.batch_size
  std::string flopsError_;                 // why there is no count
  torch::Tensor lastX_, lastY_;            // the last batch trained, on the device
  std::optional<double> computeOnlyMs_;    // the same step on that batch, median
  double loopWallS_ = -1;                  // the loop's wall time, before the compute-only steps

  // results
  Stop stop_ = Stop::None;
  std::string message_;          // diverged: what happened
  // A checkpoint write that failed, until a later write of the same kind supersedes it.
  struct MissedCheckpoint {
    int epoch = 0;
    std::string why;
  };
  std::map<std::string, MissedCheckpoint> missedCheckpoints_;  // by kind: still not on disk
  std::vector<std::string> lateCheckpoints_;  // failed writes a later one superseded (nothing lost)
  std::string checkpointError_;  // a checkpoint still missing at the end: the run then ends `failed`
  std::string bestWeightsNote_;  // early stopping could not restore the best weights: why
  double lastValAcc_ = std::nan(""), bestValAcc_ = std::nan(""), bestValLoss_ = std::nan("");
  int epochsRun_ = 0;
  std::optional<int64_t> samplesToTarget_, stepsToTarget_;  // train.stop_at_accuracy reached: when
  int64_t peakBytes_ = 0;
};

}  // namespace wb::train::detail
