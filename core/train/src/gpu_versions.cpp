#include "wb/train/gpu_versions.h"

#if defined(WB_WITH_CUDA)
#include <cuda_runtime_api.h>  // CUDART_VERSION (CUDA_VERSION is cuda.h's, which need not be included)
#endif

namespace wb::train {

std::string cudaVersionText(int cudart_version) {
  if (cudart_version <= 0) return "";
  return std::to_string(cudart_version / 1000) + "." + std::to_string((cudart_version % 1000) / 10);
}

bool ncclAvailable(bool built_with_nccl, bool cuda_device) { return built_with_nccl && cuda_device; }

int cudaRuntimeVersionOfBuild() {
#if defined(WB_WITH_CUDA) && defined(CUDART_VERSION)
  return CUDART_VERSION;
#else
  return 0;
#endif
}

}  // namespace wb::train
