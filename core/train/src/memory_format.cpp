#include "wb/train/memory_format.h"

#include <torch/torch.h>

namespace wb::train {

namespace {

int64_t layOut(model::Model& model, at::MemoryFormat format, bool dropGrads) {
  torch::NoGradGuard noGrad;
  int64_t laidOut = 0;
  for (auto& p : model.parameters()) {
    if (p.dim() != 4) continue;
    p.set_data(p.data().contiguous(format));
    if (dropGrads) p.mutable_grad() = torch::Tensor();
    ++laidOut;
  }
  return laidOut;
}

}  // namespace

int64_t layOutChannelsLast(model::Model& model) { return layOut(model, at::MemoryFormat::ChannelsLast, false); }

int64_t layOutFourD(model::Model& model, bool channelsLast) {
  return layOut(model, channelsLast ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous, true);
}

}  // namespace wb::train
