#include "worker_dist.h"

#include <cstdlib>
#include <string>

namespace wb::cli {

namespace {
int envInt(const char* a, const char* b, int fallback) {
  for (const char* name : {a, b}) {
    if (!name) continue;
    if (const char* v = std::getenv(name); v && *v) return std::atoi(v);
  }
  return fallback;
}
}  // namespace

Result<WorkerEnv> readDistEnv() {
  WorkerEnv e;
  e.rank = envInt("RANK", "SLURM_PROCID", 0);
  e.world_size = envInt("WORLD_SIZE", "SLURM_NTASKS", 1);
  e.local_rank = envInt("LOCAL_RANK", "SLURM_LOCALID", 0);
  if (e.world_size < 1 || e.rank < 0 || e.rank >= e.world_size)
    return makeError(Errc::InvalidConfig, "RANK=" + std::to_string(e.rank) + " WORLD_SIZE=" +
                                              std::to_string(e.world_size) + ": RANK must be in [0, WORLD_SIZE)");
  return e;
}

Result<std::shared_ptr<dist::Communicator>> connectDist(const WorkerEnv& env, const Config&, int) {
  if (env.world_size == 1) return std::shared_ptr<dist::Communicator>();
  return makeError(Errc::Distributed, "rank " + std::to_string(env.rank) +
                                          ": multi-process training is not wired in yet (speedups.devices must be 1)");
}

}  // namespace wb::cli
