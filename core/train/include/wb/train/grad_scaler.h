#pragma once
// Dynamic loss scaling for fp16, following PyTorch's torch.cuda.amp.GradScaler: scale 65536,
// x2 after `growth_interval` clean steps, x0.5 on overflow; an overflowing step skips the
// optimiser (and the caller skips the LR schedule). The scale and the found-inf flag stay on
// the device; only step() (once, to decide), readScale() and state() sync.
//
// Per step:   scaler.scale(loss).backward();
//             [scaler.unscale(opt); clip gradients;]      // optional
//             bool stepped = scaler.step(opt);            // false: overflow, step skipped
//             scaler.update();
//
// On CUDA it uses ATen's fused kernels (_amp_foreach_non_finite_check_and_unscale_,
// _amp_update_scale_); elsewhere (LibTorch 1.13 has no CPU kernels for them) the same
// arithmetic in plain tensor ops, so CPU runs and tests follow identical rules.
// Disabled (options.enabled=false): scale() returns the loss, step() always steps, update()
// does nothing, readScale() is 1.
// Thread affinity: one training thread. The optimiser's parameters must be on `device`.
#include <cstdint>
#include <functional>
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
  // loss * scale, same shape as loss (fp32 when the loss is fp16).
  torch::Tensor scale(const torch::Tensor& loss);
  // Divides every gradient of the optimiser's params by the scale in place and records whether
  // any is inf/nan. At most once per step: step() calls it if the caller did not (call it
  // yourself before clipping gradients). No sync.
  void unscale(torch::optim::Optimizer& optimizer);
  // Unscales the gradients of every param in the optimiser in place, checks for inf/nan, then
  // steps the optimiser unless an overflow was found. Returns true if the step was taken
  // (this call syncs once to decide).
  bool step(torch::optim::Optimizer& optimizer);
  // Updates the scale (after step()).
  void update();
  // Several ranks: every rank must take the same decision, and under ZeRO each rank's optimiser
  // sees only its shard's gradients. The reducer sums the found-inf flag across ranks (host
  // double, in place) before step() decides.
  void setFoundInfReducer(std::function<void(double*)> reducer) { reducer_ = std::move(reducer); }
  double readScale() const;
  int64_t skippedSteps() const { return skipped_; }
  // Skipped steps since the last taken one (the trainer's "stays non-finite" test).
  int64_t consecutiveSkips() const { return consecutive_; }
  bool enabled() const { return options_.enabled; }
  const GradScalerOptions& options() const { return options_; }
  // For checkpoints: keys "scale", "growth_tracker", "skipped", "consecutive". loadState()
  // takes the keys present and keeps the current value of any missing one.
  std::map<std::string, double> state() const;
  void loadState(const std::map<std::string, double>& state);

 private:
  GradScalerOptions options_;
  torch::Tensor scale_;          // float [1] on device
  torch::Tensor growth_tracker_; // int [1] on device
  torch::Tensor found_inf_;      // float [1] on device
  int64_t skipped_ = 0;
  int64_t consecutive_ = 0;
  bool unscaled_ = false;
  std::function<void(double*)> reducer_;        // unscale() already ran since the last update()
};

}  // namespace wb::train
