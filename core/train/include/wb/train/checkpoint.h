#pragma once
// Checkpoints (last.pt, best.pt): one file holding model parameters and buffers, optimiser
// state, LR-schedule position, loss-scaler and early-stopping state, RNG state and the loader
// position, so a run resumes exactly. Written to a temp file, fsynced, renamed: a writer killed
// mid-write never leaves a broken file under the final name. A corrupt or mismatching file is
// refused with an error naming the file and what to do.
#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

#include "wb/common/result.h"
#include "wb/model/model.h"

namespace wb::train {

struct CheckpointData {
  int format_version = 1;
  std::string config_json;                 // the resolved config of the run that wrote it
  int epoch = 0;                           // epoch in progress (0-based)
  int64_t batch_in_epoch = 0;              // batches of `epoch` already consumed
  int64_t global_step = 0;                 // optimiser steps taken (schedule position)
  int64_t samples_seen = 0;
  model::NamedTensors params;
  model::NamedTensors buffers;
  std::string optimizer_state;             // bytes from torch::optim::Optimizer::save via an archive
  std::map<std::string, double> scaler;
  std::map<std::string, double> early_stopping;
  std::map<std::string, double> extra;     // e.g. best metric, run clock
  torch::Tensor rng_state;                 // CPU generator state (uint8)
};

Status saveCheckpoint(const std::string& path, const CheckpointData& data);
Result<CheckpointData> loadCheckpoint(const std::string& path);

// Serialise an optimiser's state to bytes and back (used inside checkpoints and by ZeRO).
std::string optimizerStateBytes(torch::optim::Optimizer& optimizer);
Status loadOptimizerStateBytes(torch::optim::Optimizer& optimizer, const std::string& bytes);

}  // namespace wb::train
