#include "wb/train/step_mode.h"

#include "wb/common/choices.h"

namespace wb::train {

StepMode stepModeOf(const Config& c, bool cuda) {
  StepMode m;
  m.pin = c.speedups.pin_memory && cuda;
  m.bf16 = c.speedups.precision == choice::kBf16Mixed;
  m.fp16 = c.speedups.precision == choice::kFp16Mixed && cuda;
  m.channels_last = c.speedups.channels_last;
  return m;
}

torch::Tensor inStepLayout(const torch::Tensor& x, bool channelsLast) {
  return channelsLast && x.dim() == 4 ? x.contiguous(at::MemoryFormat::ChannelsLast) : x;
}

}  // namespace wb::train
