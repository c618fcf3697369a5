#pragma once
// SGD, Adam and AdamW stepping a whole param group with multi-tensor kernels (at::_foreach_*), for
// speedups.fused_optimizer: LibTorch's own classes (options, state, save/load) with step()
// replaced by the same arithmetic, in the same order, over lists of tensors.
#include <torch/torch.h>

namespace wb::train::detail {

class MultiTensorSGD final : public torch::optim::SGD {
 public:
  using SGD::SGD;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

class MultiTensorAdam final : public torch::optim::Adam {
 public:
  using Adam::Adam;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

class MultiTensorAdamW final : public torch::optim::AdamW {
 public:
  using AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace wb::train::detail
