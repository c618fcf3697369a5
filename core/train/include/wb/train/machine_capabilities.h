#pragma once
// What this machine can do, in one home: `workbench-cli capabilities`, the CLI's and the
// ladder's config checks (after the validator's, which need no machine) and the trainer read it.
// The values each field takes, and which of them need CUDA, are the tables of wb/common/choices.h.
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"

namespace wb::train {

// Config checks that need the machine (fp16 without CUDA, devices vs GPUs, CPU devices vs
// cores): errors are field errors (InvalidConfig) naming the field and the alternative. Checked
// before ranks start (world_size <= 1); a rank of a started group (world_size > 1) is not refused
// for the device count. More CPU devices than cores is refused unless allow_oversubscribe (run
// --allow-oversubscribe): the launcher then marks the run oversubscribed.
std::vector<FieldError> machineConfigErrors(const Config& config, int world_size, bool allow_oversubscribe = false);

// Default intra-op threads for this process: the logical cores shared by the ranks on this host.
int defaultThreads(const Config& config, int local_world_size);

// Versions of LibTorch, CUDA, cuDNN, NCCL in use (the `start` event's versions).
nlohmann::json versionsJson();
// What this machine can do (workbench-cli capabilities --json): libtorch, cuda, cuda_version,
// cudnn, gpus, gpu_names, cores, nccl, gloo, models, speedups{<name>: {available, note, ...}}.
nlohmann::json capabilitiesJson();

}  // namespace wb::train
