#include "wb/train/grad_scaler.h"

#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_amp_update_scale.h>

namespace wb::train {
namespace {

std::vector<torch::Tensor> gradsOf(torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> grads;
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params())
      if (p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

// Same contract as at::_amp_foreach_non_finite_check_and_unscale_ (found_inf set to 1 if any
// element of any grad is inf/nan; every grad multiplied by inv_scale), in plain tensor ops.
void unscalePortable(const std::vector<torch::Tensor>& grads, torch::Tensor& found_inf,
                     const torch::Tensor& inv_scale) {
  for (const auto& g : grads) {
    found_inf.masked_fill_(torch::logical_not(torch::isfinite(g)).any(), 1.0);
    g.mul_(inv_scale.to(g.scalar_type()));
  }
}

// Same contract as at::_amp_update_scale_: on overflow scale *= backoff and the tracker
// resets; otherwise the tracker counts clean steps and the scale grows (if the grown value is
// finite) when it reaches the interval.
void updatePortable(torch::Tensor& scale, torch::Tensor& tracker, const torch::Tensor& found_inf,
                    double growth, double backoff, int64_t interval) {
  auto overflow = found_inf.gt(0);
  auto counted = tracker + 1;
  auto grown = scale * growth;
  auto grow = torch::logical_and(torch::logical_not(overflow), counted.ge(interval));
  auto next_scale =
      torch::where(overflow, scale * backoff,
                   torch::where(torch::logical_and(grow, torch::isfinite(grown)), grown, scale));
  auto next_tracker =
      torch::where(torch::logical_or(overflow, grow), torch::zeros_like(counted), counted);
  scale.copy_(next_scale);
  tracker.copy_(next_tracker);
}

}  // namespace

GradScaler::GradScaler(GradScalerOptions options, torch::Device device) : options_(options) {
  auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(device);
  scale_ = torch::full({1}, options_.init_scale, f32);
  growth_tracker_ = torch::zeros({1}, f32.dtype(torch::kInt));
  found_inf_ = torch::zeros({1}, f32);
}

torch::Tensor GradScaler::scale(const torch::Tensor& loss) {
  if (!options_.enabled) return loss;
  return loss * scale_.reshape({}).to(loss.device(), /*non_blocking=*/true);
}

void GradScaler::unscale(torch::optim::Optimizer& optimizer) {
  if (!options_.enabled || unscaled_) return;
  unscaled_ = true;
  found_inf_.zero_();
  // Reciprocal in double, as PyTorch does, so 1/scale is exact for powers of two.
  auto inv_scale = scale_.to(torch::kDouble).reciprocal().to(torch::kFloat);
  auto grads = gradsOf(optimizer);
  if (grads.empty()) return;
  if (scale_.is_cuda()) {
    // The fused kernel wants one dtype per list.
    std::map<c10::ScalarType, std::vector<torch::Tensor>> by_dtype;
    for (auto& g : grads) by_dtype[g.scalar_type()].push_back(g);
    for (auto& [dtype, list] : by_dtype) {
      (void)dtype;
      at::_amp_foreach_non_finite_check_and_unscale_(list, found_inf_, inv_scale);
    }
  } else {
    unscalePortable(grads, found_inf_, inv_scale);
  }
}

bool GradScaler::step(torch::optim::Optimizer& optimizer) {
  if (!options_.enabled) {
    optimizer.step();
    return true;
  }
  unscale(optimizer);
  if (reducer_) {
    double found = found_inf_.item<float>();
    reducer_(&found);
    found_inf_.fill_(found != 0.0 ? 1.0 : 0.0);  // update() backs off on every rank alike
  }
  if (found_inf_.item<float>() != 0.0f) {
    ++skipped_;
    ++consecutive_;
    return false;
  }
  consecutive_ = 0;
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!options_.enabled) return;
  unscaled_ = false;
  if (scale_.is_cuda()) {
    at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor,
                           options_.backoff_factor, options_.growth_interval);
  } else {
    updatePortable(scale_, growth_tracker_, found_inf_, options_.growth_factor,
                   options_.backoff_factor, options_.growth_interval);
  }
  found_inf_.zero_();
}

double GradScaler::readScale() const {
  return options_.enabled ? scale_.item<double>() : 1.0;
}

std::map<std::string, double> GradScaler::state() const {
  return {{"scale", scale_.item<double>()},
          {"growth_tracker", static_cast<double>(growth_tracker_.item<int>())},
          {"skipped", static_cast<double>(skipped_)},
          {"consecutive", static_cast<double>(consecutive_)}};
}

void GradScaler::loadState(const std::map<std::string, double>& state) {
  if (auto it = state.find("scale"); it != state.end()) scale_.fill_(it->second);
  if (auto it = state.find("growth_tracker"); it != state.end())
    growth_tracker_.fill_(static_cast<int64_t>(it->second));
  if (auto it = state.find("skipped"); it != state.end())
    skipped_ = static_cast<int64_t>(it->second);
  if (auto it = state.find("consecutive"); it != state.end())
    consecutive_ = static_cast<int64_t>(it->second);
  found_inf_.zero_();
  unscaled_ = false;
}

}  // namespace wb::train
