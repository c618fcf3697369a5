#pragma once
// The worker's rendezvous: torchrun / srun environment -> a wb::parallel::Communicator
// (Gloo on CPU, NCCL with one GPU per rank where CUDA and NCCL are present).
#include <memory>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/parallel/communicator.h"
#include "wb/parallel/env.h"

namespace wb::cli {

// RANK / WORLD_SIZE / LOCAL_RANK / MASTER_* (or SLURM_*); absent = a single process.
Result<parallel::DistEnv> readDistEnv();

// Null for a single process.
Result<std::shared_ptr<parallel::Communicator>> connectDist(const parallel::DistEnv& env, const Config& config, int timeout_s);

}  // namespace wb::cli
