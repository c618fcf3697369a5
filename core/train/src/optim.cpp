// Optimiser factory, the Adadelta LibTorch lacks, and the LR schedules.
#include "wb/train/optim.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include <torch/optim/serialize.h>

#include "multi_tensor_optim.h"

namespace wb::train {
namespace {

constexpr double kPi = 3.14159265358979323846;

// LibTorch keys optimiser state by the param's TensorImpl: a string in 1.13, the pointer
// itself in 2.x. Deduce which from the map so one source builds against both.
template <class StateMap>
typename StateMap::key_type stateKey(const StateMap&, const torch::Tensor& p) {
  if constexpr (std::is_same_v<typename StateMap::key_type, std::string>) {
    return c10::str(p.unsafeGetTensorImpl());
  } else {
    return p.unsafeGetTensorImpl();
  }
}

// The optim.* subset of the config's own validation, so messages match `validate()`.
std::vector<FieldError> optimErrors(const OptimConfig& optim) {
  Config config;
  config.optim = optim;
  std::vector<FieldError> out;
  for (auto& e : validate(config)) {
    if (e.path.rfind("optim.", 0) == 0) out.push_back(std::move(e));
  }
  return out;
}

// LibTorch's optimiser, or with multiTensor its subclass whose step() runs over tensor lists.
template <class Plain, class Multi, class Options>
std::unique_ptr<torch::optim::Optimizer> either(bool multiTensor, std::vector<torch::Tensor> params, Options o) {
  if (multiTensor) return std::make_unique<Multi>(std::move(params), o);
  return std::make_unique<Plain>(std::move(params), o);
}

std::unique_ptr<torch::optim::Optimizer> build(const OptimConfig& c, std::vector<torch::Tensor> params,
                                               bool multiTensor) {
  namespace o = torch::optim;
  if (c.name == "sgd")
    return either<o::SGD, detail::MultiTensorSGD>(
        multiTensor, std::move(params),
        o::SGDOptions(c.lr).momentum(c.momentum).nesterov(c.nesterov).weight_decay(c.weight_decay));
  if (c.name == "adam")
    return either<o::Adam, detail::MultiTensorAdam>(multiTensor, std::move(params),
                                                    o::AdamOptions(c.lr).weight_decay(c.weight_decay));
  if (c.name == "adamw")
    return either<o::AdamW, detail::MultiTensorAdamW>(multiTensor, std::move(params),
                                                      o::AdamWOptions(c.lr).weight_decay(c.weight_decay));
  return std::make_unique<Adadelta>(std::move(params),
                                    AdadeltaOptions(c.lr).weight_decay(c.weight_decay));
}

// torch's _annealing_cos: from start (pct 0) to end (pct 1).
double annealCos(double start, double end, double pct) {
  return end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1.0);
}

double fraction(double num, double den) { return den > 0.0 ? num / den : 1.0; }

}  // namespace

// ---- factory -----------------------------------------------------------------------------

Result<std::unique_ptr<torch::optim::Optimizer>> makeOptimizer(const OptimConfig& config,
                                                               std::vector<torch::Tensor> params,
                                                               bool multiTensor) {
  if (auto errors = optimErrors(config); !errors.empty()) {
    return makeError(Errc::InvalidConfig, formatFieldErrors(errors));
  }
  if (multiTensor && config.name == "adadelta")
    return makeError(Errc::InvalidConfig, "speedups.fused_optimizer: true \u2014 adadelta has no multi-tensor step; "
                                          "use sgd, adam or adamw, or turn it off");
  if (params.empty()) {
    return makeError(Errc::Model, "optim." + config.name +
                                      ": the model has no trainable parameters to optimise — "
                                      "check the model (a TorchScript model must register them)");
  }
  try {
    return build(config, std::move(params), multiTensor);
  } catch (const c10::Error& e) {
    return makeError(Errc::InvalidConfig,
                     "optim." + config.name + ": " + e.what_without_backtrace());
  }
}

void setLearningRate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

// ---- schedules ---------------------------------------------------------------------------

LrSchedule::LrSchedule(const OptimConfig& config, int64_t total_steps, int64_t steps_per_epoch, int devices, int batch_size)
    : config_(config),
      total_steps_(std::max<int64_t>(1, total_steps)),
      steps_per_epoch_(std::max<int64_t>(1, steps_per_epoch)),
      scaling_(lrScaling(config, devices, total_steps, batch_size)) {
  const auto& s = config_.schedule;
  if (s != "constant" && s != "step" && s != "cosine" && s != "onecycle") {
    throw std::invalid_argument("LrSchedule: unknown optim.schedule '" + s + "'");
  }
}

double LrSchedule::lrAt(int64_t step) const {
  return scheduledAt(step) * lrScalingFactorAt(scaling_, std::clamp<int64_t>(step, 0, total_steps_));
}

nlohmann::json LrSchedule::scalingJson() const {
  const LrScaling& s = scaling_;
  return {{"mode", s.mode},           {"devices", s.devices},           {"base_lr", s.base_lr},
          {"factor", s.factor},       {"effective_lr", s.effective_lr}, {"warmup_steps", s.warmup_steps},
          {"note", s.note}};
}

double LrSchedule::scheduledAt(int64_t step) const {
  const double lr = config_.lr;
  const auto& name = config_.schedule;
  step = std::clamp<int64_t>(step, 0, total_steps_);
  if (name == "step") {
    const int64_t epoch = step / steps_per_epoch_;
    return lr * std::pow(config_.gamma, static_cast<double>(epoch / config_.step_size));
  }
  if (name == "cosine") {
    const auto warmup = static_cast<int64_t>(std::llround(config_.warmup_fraction * total_steps_));
    if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
    return annealCos(lr, 0.0, fraction(step - warmup, total_steps_ - warmup));
  }
  if (name == "onecycle") {
    // OneCycleLR's two phases, with its float phase boundaries.
    const double pct_start = config_.warmup_fraction > 0.0 ? config_.warmup_fraction : 0.3;
    const double initial = lr / 25.0;
    const double final_lr = initial / 1e4;
    const double end_warm = pct_start * static_cast<double>(total_steps_) - 1.0;
    const double end_all = static_cast<double>(total_steps_) - 1.0;
    const double s = static_cast<double>(std::min(step, total_steps_ - 1));
    if (s <= end_warm) return annealCos(initial, lr, fraction(s, end_warm));
    return annealCos(lr, final_lr, fraction(s - end_warm, end_all - end_warm));
  }
  return lr;
}

// ---- Adadelta ----------------------------------------------------------------------------

AdadeltaOptions::AdadeltaOptions(double lr) : lr_(lr) {}

void AdadeltaOptions::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(rho);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(eps);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
}

void AdadeltaOptions::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, rho);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, eps);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
}

double AdadeltaOptions::get_lr() const { return lr(); }
void AdadeltaOptions::set_lr(const double lr) { this->lr(lr); }

void AdadeltaParamState::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(step);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(square_avg);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(acc_delta);
}

void AdadeltaParamState::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(int64_t, step);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, square_avg);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, acc_delta);
}

Adadelta::Adadelta(std::vector<torch::optim::OptimizerParamGroup> param_groups,
                   AdadeltaOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdadeltaOptions>(defaults)) {
  TORCH_CHECK(defaults.lr() >= 0, "Invalid learning rate: ", defaults.lr());
  TORCH_CHECK(defaults.rho() >= 0 && defaults.rho() <= 1, "Invalid rho value: ", defaults.rho());
  TORCH_CHECK(defaults.eps() >= 0, "Invalid epsilon value: ", defaults.eps());
  TORCH_CHECK(defaults.weight_decay() >= 0, "Invalid weight_decay value: ",
              defaults.weight_decay());
}

Adadelta::Adadelta(std::vector<torch::Tensor> params, AdadeltaOptions defaults)
    : Adadelta(std::vector<torch::optim::OptimizerParamGroup>{
                   torch::optim::OptimizerParamGroup(std::move(params))},
               defaults) {}

torch::Tensor Adadelta::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const AdadeltaOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      torch::Tensor grad = p.grad();
      TORCH_CHECK(!grad.is_sparse(), "Adadelta does not support sparse gradients");
      auto& slot = state_[stateKey(state_, p)];
      if (!slot) {
        auto fresh = std::make_unique<AdadeltaParamState>();
        fresh->square_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
        fresh->acc_delta(torch::zeros_like(p, at::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& state = static_cast<AdadeltaParamState&>(*slot);
      state.step(state.step() + 1);
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      // Same operation order as torch.optim.Adadelta, so results match bit for bit on CPU.
      state.square_avg().mul_(o.rho()).addcmul_(grad, grad, 1 - o.rho());
      const torch::Tensor std = state.square_avg().add(o.eps()).sqrt_();
      const torch::Tensor delta = state.acc_delta().add(o.eps()).sqrt_().div_(std).mul_(grad);
      state.acc_delta().mul_(o.rho()).addcmul_(delta, delta, 1 - o.rho());
      p.add_(delta, -o.lr());
    }
  }
  return loss;
}

void Adadelta::save(torch::serialize::OutputArchive& archive) const {
  torch::optim::serialize<AdadeltaParamState, AdadeltaOptions>(archive, *this);
}

void Adadelta::load(torch::serialize::InputArchive& archive) {
  torch::optim::serialize<AdadeltaParamState, AdadeltaOptions>(archive, *this);
}

}  // namespace wb::train
