#pragma once
// The loaders a training run reads, built from its config: the one home of that rule, shared by
// the trainer and the worker-count probe (so the probe times the loader the run will use).
#include "wb/common/config.h"
#include "wb/data/loader.h"

namespace wb::data {

// This rank's training loader: shuffled, augmented as data.augment says (a random resized crop
// for an ImageFolder with data.image_size), sharded over world_size ranks.
LoaderOptions trainLoaderOptions(const Config& c, bool pin_memory, int workers, int rank = 0, int world_size = 1);
// The validation loader beside it: in order, no augmentation, the evaluation batch when
// speedups.inference_eval is on.
LoaderOptions evalLoaderOptions(const Config& c, const LoaderOptions& train);

}  // namespace wb::data
