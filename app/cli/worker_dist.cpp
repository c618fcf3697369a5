#include "worker_dist.h"

#include <torch/torch.h>

namespace wb::cli {

Result<parallel::DistEnv> readDistEnv() { return parallel::DistEnv::fromEnvironment(); }

Result<std::shared_ptr<parallel::Communicator>> connectDist(const parallel::DistEnv& env, const Config&, int timeout_s) {
  if (!env.launched() || env.world_size == 1) return std::shared_ptr<parallel::Communicator>();
  parallel::CommOptions o;
  o.backend = (torch::cuda::is_available() && parallel::ncclCompiled()) ? parallel::Backend::Nccl : parallel::Backend::Gloo;
  o.timeout = std::chrono::seconds(timeout_s);
  o.rendezvous_timeout = std::chrono::seconds(std::min(timeout_s, 120));
  auto c = parallel::Communicator::create(env, o);
  if (!c.ok()) return c.error();
  return std::shared_ptr<parallel::Communicator>(std::move(c.value()));
}

}  // namespace wb::cli
