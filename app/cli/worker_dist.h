#pragma once
// The worker's rendezvous: torchrun / srun environment -> a wb::dist::Communicator.
#include <memory>

#include "wb/common/config.h"
#include "wb/common/result.h"

namespace wb::dist {
class Communicator;
}

namespace wb::cli {

struct WorkerEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
};

// RANK / WORLD_SIZE / LOCAL_RANK (or SLURM_*); absent = a single process.
Result<WorkerEnv> readDistEnv();

// Null for world size 1.
Result<std::shared_ptr<dist::Communicator>> connectDist(const WorkerEnv& env, const Config& config, int timeout_s);

}  // namespace wb::cli
