#pragma once
// The one place that knows which LibTorch API moved between 1.13 (Debian) and 2.x (PyTorch
// 2.11's bundled LibTorch on the GPU machine): autocast, c10d and the CUDA allocator's statistics.
#include <cstdint>

#include <torch/torch.h>
#include <torch/version.h>

namespace wb::compat {

// Enables autocast for device_type (kCPU or kCUDA) with dtype for the guard's lifetime,
// restoring the previous state (enabled flag and dtype) on destruction. enabled=false: no-op.
// Like torch.autocast, guards nest: the outermost one to close clears the weight-cast cache.
// Autocast state is thread-local: create and destroy a guard on the same thread, around the
// forward pass and loss only (backward runs outside it). Other device types: c10::Error.
class AutocastGuard {
 public:
  AutocastGuard(c10::DeviceType device_type, at::ScalarType dtype, bool enabled);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType device_type_;
  bool active_ = false;
  bool prev_enabled_ = false;
  at::ScalarType prev_dtype_ = at::kFloat;
};

// Clears autocast's weight-cast cache (call after each step, as torch.autocast's exit does).
void clearAutocastCache();

// The calling thread's autocast state for device_type (kCPU or kCUDA).
bool autocastEnabled(c10::DeviceType device_type);
at::ScalarType autocastDtype(c10::DeviceType device_type);

// The CUDA caching allocator's figures for one device, in bytes (all pools together).
struct CudaMemory {
  int64_t allocated = 0;  // held by tensors now
  int64_t reserved = 0;   // held by the allocator from the driver now
  int64_t peak = 0;       // most held by tensors since the last resetCudaPeakMemory
};
// Throw std::logic_error in a build without CUDA (WB_WITH_CUDA unset).
CudaMemory cudaMemory(c10::DeviceIndex device);
void resetCudaPeakMemory(c10::DeviceIndex device);

}  // namespace wb::compat
