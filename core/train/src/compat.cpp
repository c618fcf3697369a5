#include "wb/train/compat.h"

#include <stdexcept>
#include <string>

#include <ATen/autocast_mode.h>

#if defined(WB_WITH_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#endif

// LibTorch 2.4 replaced the per-device autocast setters (set_enabled / set_cpu_enabled,
// set_autocast_gpu_dtype / set_autocast_cpu_dtype) with ones taking the device type, and
// deprecated the old ones (they warn on every call). Everything version-dependent stays below.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define WB_AUTOCAST_DEVICE_API 1
#else
#define WB_AUTOCAST_DEVICE_API 0
#endif

namespace wb::compat {
namespace {

void checkDevice(c10::DeviceType device_type) {
  TORCH_CHECK(device_type == c10::DeviceType::CPU || device_type == c10::DeviceType::CUDA,
              "AutocastGuard supports CPU and CUDA only, got ", c10::DeviceTypeName(device_type));
}

#if WB_AUTOCAST_DEVICE_API
bool enabledFor(c10::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
void setEnabledFor(c10::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
at::ScalarType dtypeFor(c10::DeviceType d) { return at::autocast::get_autocast_dtype(d); }
void setDtypeFor(c10::DeviceType d, at::ScalarType t) { at::autocast::set_autocast_dtype(d, t); }
#else
bool enabledFor(c10::DeviceType d) {
  return d == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void setEnabledFor(c10::DeviceType d, bool on) {
  if (d == c10::DeviceType::CUDA)
    at::autocast::set_enabled(on);
  else
    at::autocast::set_cpu_enabled(on);
}
at::ScalarType dtypeFor(c10::DeviceType d) {
  return d == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                    : at::autocast::get_autocast_cpu_dtype();
}
void setDtypeFor(c10::DeviceType d, at::ScalarType t) {
  if (d == c10::DeviceType::CUDA)
    at::autocast::set_autocast_gpu_dtype(t);
  else
    at::autocast::set_autocast_cpu_dtype(t);
}
#endif

#if defined(WB_WITH_CUDA)
// LibTorch 2.6 moved Stat, StatType, StatArray and DeviceStats from c10::cuda::CUDACachingAllocator
// to c10::CachingDeviceAllocator (c10/core/CachingDeviceAllocator.h); later versions define the
// Stat types in c10::CachingAllocator and pull them into c10::CachingDeviceAllocator with a
// using-directive, so that name serves 2.6 to 2.11 (read against 2.6's headers and 2.11's).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 6)
using CudaStatType = c10::CachingDeviceAllocator::StatType;
#else
using CudaStatType = c10::cuda::CUDACachingAllocator::StatType;
#endif
#endif

}  // namespace

CudaMemory cudaMemory(c10::DeviceIndex device) {
#if defined(WB_WITH_CUDA)
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
  const auto all = static_cast<size_t>(CudaStatType::AGGREGATE);
  CudaMemory m;
  m.allocated = stats.allocated_bytes[all].current;
  m.reserved = stats.reserved_bytes[all].current;
  m.peak = stats.allocated_bytes[all].peak;
  return m;
#else
  throw std::logic_error("cudaMemory(" + std::to_string(device) + "): this build has no CUDA");
#endif
}

void resetCudaPeakMemory(c10::DeviceIndex device) {
#if defined(WB_WITH_CUDA)
  c10::cuda::CUDACachingAllocator::resetPeakStats(device);
#else
  throw std::logic_error("resetCudaPeakMemory(" + std::to_string(device) + "): this build has no CUDA");
#endif
}

AutocastGuard::AutocastGuard(c10::DeviceType device_type, at::ScalarType dtype, bool enabled)
    : device_type_(device_type) {
  if (!enabled) return;
  checkDevice(device_type);
  prev_enabled_ = enabledFor(device_type);
  prev_dtype_ = dtypeFor(device_type);
  setDtypeFor(device_type, dtype);
  setEnabledFor(device_type, true);
  // As torch.autocast.__enter__: nesting decides when the weight-cast cache may be dropped.
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastGuard::~AutocastGuard() {
  if (!active_) return;
  // As torch.autocast.__exit__: the outermost exit drops the cached casts, so weights updated
  // by the optimiser are re-cast next step instead of served stale from the cache.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  setEnabledFor(device_type_, prev_enabled_);
  setDtypeFor(device_type_, prev_dtype_);
}

void clearAutocastCache() { at::autocast::clear_cache(); }

bool autocastEnabled(c10::DeviceType device_type) {
  checkDevice(device_type);
  return enabledFor(device_type);
}

at::ScalarType autocastDtype(c10::DeviceType device_type) {
  checkDevice(device_type);
  return dtypeFor(device_type);
}

}  // namespace wb::compat
