#pragma once
// The CUDA and NCCL figures capabilities and the `start` event print: what this build was
// compiled with, and whether NCCL may be reported available. Pure rules beside the build's facts,
// so a machine without a GPU tests the rules.
#include <string>

namespace wb::train {

// CUDART_VERSION's encoding (major * 1000 + minor * 10) as text: 13000 -> "13.0", 12040 -> "12.4",
// 11080 -> "11.8"; 0 or less (no CUDA runtime) -> "".
std::string cudaVersionText(int cudart_version);

// NCCL is available only in a build that compiled ProcessGroupNCCL (wb::parallel::ncclCompiled())
// and on a machine with a usable CUDA device; a CUDA LibTorch alone is not enough.
bool ncclAvailable(bool built_with_nccl, bool cuda_device);

// CUDART_VERSION of the CUDA runtime headers this build was compiled against; 0 without CUDA.
int cudaRuntimeVersionOfBuild();

}  // namespace wb::train
