#include "wb/train/sync.h"

namespace wb::train {

Result<std::unique_ptr<GradSync>> makeGradSync(const Config& config, dist::Communicator* comm,
                                               model::Model& model, const torch::Device& device) {
  if (!comm) return std::unique_ptr<GradSync>();
  return makeError(Errc::Distributed, "speedups.devices: multi-process training is not wired in yet");
}

}  // namespace wb::train
