#pragma once
// Channels-last (speedups.channels_last) on a model: every 4-D parameter (a convolution's weight)
// laid out NHWC in place (set_data: the optimiser, gradient hooks and checkpoints keep the same
// tensors; checkpoints load into it by copy). The input batches follow in BatchCopier.
#include <cstdint>

#include "wb/model/model.h"

namespace wb::train {

// How many parameters were laid out (0: the model has no 4-D weights).
int64_t layOutChannelsLast(model::Model& model);

// Every 4-D parameter NHWC (channelsLast) or back to NCHW, for a probe that switches the layout
// within one process; their gradients are dropped (the next backward makes them in the new
// layout). How many parameters were laid out.
int64_t layOutFourD(model::Model& model, bool channelsLast);

}  // namespace wb::train
