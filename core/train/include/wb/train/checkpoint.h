#pragma once
// Checkpoints (last.pt, best.pt): one file holding model parameters and buffers, optimiser
// state, LR-schedule position, loss-scaler and early-stopping state, RNG state and the loader
// position, so a run resumes exactly. Written to a temp file, fsynced, renamed: a writer killed
// mid-write never leaves a broken file under the final name. A corrupt or mismatching file is
// refused with an error naming the file and what to do: before anything is decoded, every entry
// of the archive is checked against its CRC-32, so flipped bytes inside tensor data are caught.
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

// After a successful write, also removes the stale temp files of its folder (see below).
Status saveCheckpoint(const std::string& path, const CheckpointData& data);
Result<CheckpointData> loadCheckpoint(const std::string& path);

// Removes the "<name>.tmp-<pid>" files in dir whose writer process no longer exists (a writer
// killed mid-write leaves one). A live writer's temp file is kept. Returns how many were
// removed; a missing dir removes none. Call it when a run starts or resumes.
int removeStaleTemporaries(const std::string& dir);

// Serialise an optimiser's state to bytes and back (used inside checkpoints and by ZeRO).
std::string optimizerStateBytes(torch::optim::Optimizer& optimizer);
Status loadOptimizerStateBytes(torch::optim::Optimizer& optimizer, const std::string& bytes);

}  // namespace wb::train
