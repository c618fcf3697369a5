#include "wb/train/memory_format.h"

#include <torch/torch.h>

namespace wb::train {

int64_t layOutChannelsLast(model::Model& model) {
  torch::NoGradGuard noGrad;
  int64_t laidOut = 0;
  for (auto& p : model.parameters()) {
    if (p.dim() != 4) continue;
    p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
    ++laidOut;
  }
  return laidOut;
}

}  // namespace wb::train
