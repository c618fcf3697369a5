#pragma once
// What a LibTorch test needs of this machine (beside machine.h's): a CUDA device. CI has none, so
// every GPU test skips there, saying so.
#include <torch/torch.h>

#include "machine.h"

namespace wb::test {

inline QString missingCuda() {
  return torch::cuda::is_available() ? QString()
                                     : QStringLiteral("no CUDA device on this machine (CI has none: this runs on a GPU machine)");
}

}  // namespace wb::test
