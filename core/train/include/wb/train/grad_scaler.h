#pragma once
// Dynamic loss scaling for fp16, following PyTorch's torch.cuda.amp.GradScaler: scale 65536,
// x2 after `growth_interval` clean steps, x0.5 on overflow; an overflowing step skips the
// optimiser (and the caller skips the LR schedule). The scale and the found-inf flag stay on
// the device; only readScale()/skippedSteps() sync.
#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

namespace wb::train {

struct GradScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  bool enabled = true;
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {}, torch::Device device = torch::kCPU);
  torch::Tensor scale(const torch::Tensor& loss);
  // Unscales the gradients of every param in the optimiser in place, checks for inf/nan, then
  // steps the optimiser unless an overflow was found. Returns true if the step was taken
  // (this call syncs once to decide).
  bool step(torch::optim::Optimizer& optimizer);
  // Updates the scale (after step()).
  void update();
  double readScale() const;
  int64_t skippedSteps() const { return skipped_; }
  bool enabled() const { return options_.enabled; }
  // For checkpoints.
  std::map<std::string, double> state() const;
  void loadState(const std::map<std::string, double>& state);

 private:
  GradScalerOptions options_;
  torch::Tensor scale_;          // float [1] on device
  torch::Tensor growth_tracker_; // int [1] on device
  torch::Tensor found_inf_;      // float [1] on device
  int64_t skipped_ = 0;
};

}  // namespace wb::train
