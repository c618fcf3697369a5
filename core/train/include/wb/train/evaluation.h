#pragma once
// One evaluation pass over a loader (the validation split), as the trainer evaluates: the model in
// eval mode, under InferenceMode when `inference` (else autograd stays on, as a naive loop does),
// autocast to bf16 when `bf16`; each batch through the run's BatchCopier (pinned, channels-last).
// The sums are this process's: the trainer reduces them across ranks; a probe that times
// evaluations (wb/probe/segments.h) calls it as it is.
#include <cstdint>

#include <torch/torch.h>

#include "wb/data/loader.h"
#include "wb/model/model.h"
#include "wb/train/batch_copy.h"

namespace wb::train {

struct EvalSums {
  double loss_sum = 0;  // summed cross-entropy
  int64_t correct = 0;
  int64_t samples = 0;
};

EvalSums evaluatePass(model::Model& model, data::Loader& loader, BatchCopier& copier, const torch::Device& device,
                      bool inference, bool bf16);

}  // namespace wb::train
