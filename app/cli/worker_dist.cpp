#include "worker_dist.h"

#include <torch/torch.h>

namespace wb::cli {

Result<dist::DistEnv> readDistEnv() { return dist::DistEnv::fromEnvironment(); }

Result<std::shared_ptr<dist::Communicator>> connectDist(const dist::DistEnv& env, const Config&, int timeout_s) {
  if (!env.launched() || env.world_size == 1) return std::shared_ptr<dist::Communicator>();
  dist::CommOptions o;
  o.backend = (torch::cuda::is_available() && dist::ncclCompiled()) ? dist::Backend::Nccl : dist::Backend::Gloo;
  o.timeout = std::chrono::seconds(timeout_s);
  o.rendezvous_timeout = std::chrono::seconds(std::min(timeout_s, 120));
  auto c = dist::Communicator::create(env, o);
  if (!c.ok()) return c.error();
  return std::shared_ptr<dist::Communicator>(std::move(c.value()));
}

}  // namespace wb::cli
