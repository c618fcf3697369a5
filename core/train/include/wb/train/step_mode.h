#pragma once
// How a training step runs for a config on a device: its autocast type, its loss scaling, its
// host memory and its layout. The one home the trainer and the probes that time steps in one
// process (wb/probe: segments switch arms by taking another arm's mode) both read.
#include <torch/torch.h>

#include "wb/common/config.h"

namespace wb::train {

struct StepMode {
  bool pin = false;            // batches in page-locked memory (speedups.pin_memory, CUDA only)
  bool bf16 = false;           // autocast to bf16 (precision bf16-mixed, CPU or GPU)
  bool fp16 = false;           // autocast to fp16 with loss scaling (precision 16-mixed, CUDA only)
  bool channels_last = false;  // NHWC inputs and 4-D weights (speedups.channels_last)
};

StepMode stepModeOf(const Config& c, bool cuda);

// An input batch on its device as a step takes it: 4-D images NHWC under channels-last.
torch::Tensor inStepLayout(const torch::Tensor& x, bool channelsLast);

}  // namespace wb::train
