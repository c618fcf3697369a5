#pragma once
// The trainer: one rank's training loop. Reads data through wb::data::Loader, trains a
// wb::model::Model, evaluates each epoch, and reports everything as events on an EventSink
// (start, step every log_every steps, eval, epoch, checkpoint, early_stop, warning). It does not
// write `end`: the caller (the worker command) does, from the returned outcome. What the machine
// can do (and the config checks that need it): wb/train/machine_capabilities.h.
//
// Thread affinity: run() on one thread; requestStop() from any thread or a signal handler.
// No device sync per step: losses accumulate on the device and are read at the log interval.
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/proto/events.h"
#include "wb/proto/run_summary.h"
#include "wb/proto/flops_record.h"
#include "wb/train/machine_capabilities.h"  // run() refuses what machineConfigErrors() refuses

namespace wb::parallel {
class Communicator;
}

namespace wb::train {

struct TrainerOptions {
  Config config;
  std::string run_dir;        // checkpoints go to <run_dir>/checkpoints (rank 0); empty = none
  std::string resume_from;    // a checkpoint file to continue from (last.pt)
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 0;   // ranks on this host, sharing its cores (0: all of world_size)
  parallel::Communicator* comm = nullptr;   // non-null when world_size > 1 (not owned); null: a
                                        // group of one (wb/train/replica_group.h)
  const std::atomic<bool>* stop_flag = nullptr;  // set => finish the step, end `cancelled`
  // The peaks this run's FLOP/s are set against: peak / no_peak (and datasheet / no_datasheet on
  // a GPU) as wb::records::setPeaks fills them from the stored calibration; the trainer adds
  // its FLOPs per step and achieved rate and writes the whole as the step events' and the
  // summary's "flops" (wb/proto/flops_record.h). Left empty: "no peak given".
  proto::FlopsFigures peaks;
  // After the last epoch, the same step this many times on the last batch, already in memory
  // (no loading, no copying): the summary's flops.compute_only_step_ms, next to the real step.
  // One rank only; 0 skips it. The weights it moves are never saved (last.pt is already written).
  int compute_only_steps = 3;
};

struct TrainOutcome {
  std::string status;         // ok | early-stopped | cancelled | diverged | failed
  // best/final val acc, epochs, steps, peak_mem, and the clocks, each named for what it covers:
  // train_s / train_samples / train_samples_per_s (training steps only), eval_s, checkpoint_s,
  // time_to_first_step_s (from this process's start), wall_s (the loop: steps + evaluation +
  // checkpoints), cpu (what the rank got: process vs other cores, threads). Early-stopped with a
  // folder (rank 0): best_weights_restored, false with best_weights_note when best.pt could not
  // be loaded back (the model then holds the last epoch's weights).
  proto::RunSummary summary;  // the trainer's part of summary.json (wb/proto/run_summary.h)
  std::string message;        // for diverged/failed: what happened, in words
};

class Trainer {
 public:
  Trainer(TrainerOptions options, proto::EventSink& sink);
  ~Trainer();
  // Runs to the end. Errors: InvalidConfig (bad combination for this machine), Data (dataset
  // problems), Model, Checkpoint (resume file refused). Non-finite loss ends as status
  // "diverged" (an outcome, not an error).
  Result<TrainOutcome> run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wb::train
