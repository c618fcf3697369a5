#include "multi_tensor_optim.h"

#include <cmath>
#include <vector>

#include "wb/parallel/c10d_compat.h"

namespace wb::train::detail {
namespace {

using Tensors = std::vector<torch::Tensor>;
using Scalars = std::vector<at::Scalar>;

torch::Tensor evaluate(const torch::optim::Optimizer::LossClosure& closure) {
  if (!closure) return {};
  at::AutoGradMode enable_grad(true);
  return closure();
}

// The group's parameters that have a gradient, and those gradients.
void withGrads(torch::optim::OptimizerParamGroup& group, Tensors& params, Tensors& grads) {
  for (auto& p : group.params())
    if (p.grad().defined()) {
      params.push_back(p);
      grads.push_back(p.grad());
    }
}

// Adam's and AdamW's moments and per-tensor bias corrections (state made as LibTorch makes it).
struct Moments {
  Tensors avg, sq;
  Scalars stepSize, sqrtCorrection2;
};

template <class State, class Map>
Moments adamMoments(Map& state, const Tensors& params, double lr, double beta1, double beta2) {
  Moments m;
  for (const auto& p : params) {
    auto& slot = state[parallel::compat::optimizerStateKey(state, p)];
    if (!slot) {
      auto fresh = std::make_unique<State>();
      fresh->step(0);
      fresh->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
      fresh->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
      slot = std::move(fresh);
    }
    auto& s = static_cast<State&>(*slot);
    s.step(s.step() + 1);
    m.avg.push_back(s.exp_avg());
    m.sq.push_back(s.exp_avg_sq());
    const double c1 = 1 - std::pow(beta1, static_cast<double>(s.step()));
    const double c2 = 1 - std::pow(beta2, static_cast<double>(s.step()));
    m.stepSize.emplace_back(-(lr / c1));
    m.sqrtCorrection2.emplace_back(std::sqrt(c2));
  }
  return m;
}

// exp_avg = b1 exp_avg + (1 - b1) g; exp_avg_sq = b2 exp_avg_sq + (1 - b2) g²;
// p -= lr / c1 · exp_avg / (sqrt(exp_avg_sq) / sqrt(c2) + eps)
void adamUpdate(const Tensors& params, const Tensors& grads, Moments& m, double beta1, double beta2, double eps) {
  at::_foreach_mul_(m.avg, at::Scalar(beta1));
  at::_foreach_add_(m.avg, grads, at::Scalar(1 - beta1));
  at::_foreach_mul_(m.sq, at::Scalar(beta2));
  at::_foreach_addcmul_(m.sq, grads, grads, at::Scalar(1 - beta2));
  Tensors denom = at::_foreach_sqrt(m.sq);
  at::_foreach_div_(denom, at::ArrayRef<at::Scalar>(m.sqrtCorrection2));
  at::_foreach_add_(denom, at::Scalar(eps));
  at::_foreach_addcdiv_(params, m.avg, denom, at::ArrayRef<at::Scalar>(m.stepSize));
}

}  // namespace

torch::Tensor MultiTensorSGD::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss = evaluate(closure);
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::SGDOptions&>(group.options());
    Tensors params, grads;
    withGrads(group, params, grads);
    if (params.empty()) continue;
    if (o.weight_decay() != 0) grads = at::_foreach_add(grads, params, at::Scalar(o.weight_decay()));
    if (o.momentum() != 0) {
      Tensors bufs(params.size()), older, olderGrads;
      for (size_t i = 0; i < params.size(); ++i) {
        auto& slot = state_[parallel::compat::optimizerStateKey(state_, params[i])];
        if (!slot) {  // the first step: the buffer is the gradient itself
          auto fresh = std::make_unique<torch::optim::SGDParamState>();
          fresh->momentum_buffer(torch::clone(grads[i]).detach());
          bufs[i] = fresh->momentum_buffer();
          slot = std::move(fresh);
          continue;
        }
        bufs[i] = static_cast<torch::optim::SGDParamState&>(*slot).momentum_buffer();
        older.push_back(bufs[i]);
        olderGrads.push_back(grads[i]);
      }
      if (!older.empty()) {
        at::_foreach_mul_(older, at::Scalar(o.momentum()));
        at::_foreach_add_(older, olderGrads, at::Scalar(1 - o.dampening()));
      }
      grads = o.nesterov() ? at::_foreach_add(grads, bufs, at::Scalar(o.momentum())) : bufs;
    }
    at::_foreach_add_(params, grads, at::Scalar(-o.lr()));
  }
  return loss;
}

namespace {

// One Adam (decoupled: AdamW) group: L2 weight decay added to the gradients, or AdamW's decay of
// the weights first; then the moments and the update.
template <class Options, class State, class Map>
void adamGroup(Map& state, torch::optim::OptimizerParamGroup& group, bool decoupled) {
  const auto& o = static_cast<const Options&>(group.options());
  TORCH_CHECK(!o.amsgrad(), "the multi-tensor Adam step has no amsgrad");
  Tensors params, grads;
  withGrads(group, params, grads);
  if (params.empty()) return;
  if (decoupled && o.weight_decay() != 0) at::_foreach_mul_(params, at::Scalar(1 - o.lr() * o.weight_decay()));
  const auto [beta1, beta2] = o.betas();
  Moments m = adamMoments<State>(state, params, o.lr(), beta1, beta2);
  if (!decoupled && o.weight_decay() != 0) grads = at::_foreach_add(grads, params, at::Scalar(o.weight_decay()));
  adamUpdate(params, grads, m, beta1, beta2, o.eps());
}

}  // namespace

torch::Tensor MultiTensorAdam::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss = evaluate(closure);
  for (auto& group : param_groups_)
    adamGroup<torch::optim::AdamOptions, torch::optim::AdamParamState>(state_, group, /*decoupled=*/false);
  return loss;
}

torch::Tensor MultiTensorAdamW::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss = evaluate(closure);
  for (auto& group : param_groups_)
    adamGroup<torch::optim::AdamWOptions, torch::optim::AdamWParamState>(state_, group, /*decoupled=*/true);
  return loss;
}

}  // namespace wb::train::detail
