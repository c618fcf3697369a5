#include "wb/train/batch_copy.h"

#include "wb/train/step_mode.h"

#include <optional>

#if defined(WB_WITH_CUDA)
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace wb::train {

struct BatchCopier::Impl {
  torch::Device device{torch::kCPU};
  bool side = false;
  bool channelsLast = false;
#if defined(WB_WITH_CUDA)
  std::optional<c10::cuda::CUDAStream> copyStream;
  at::cuda::CUDAEvent copied;  // re-recorded after each batch's copies
#endif
};

BatchCopier::BatchCopier(torch::Device device, bool pinned, bool channelsLast) : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  impl_->side = pinned && device.is_cuda();
  impl_->channelsLast = channelsLast;
}

BatchCopier::~BatchCopier() = default;

bool BatchCopier::sideStream() const { return impl_->side; }

std::pair<torch::Tensor, torch::Tensor> BatchCopier::toDevice(const torch::Tensor& x, const torch::Tensor& y) {
  auto out = copy(x, y);
  out.first = inStepLayout(out.first, impl_->channelsLast);
  return out;
}

std::pair<torch::Tensor, torch::Tensor> BatchCopier::copy(const torch::Tensor& x, const torch::Tensor& y) {
  Impl& d = *impl_;
  if (!d.device.is_cuda()) return {x.to(d.device), y.to(d.device)};
#if defined(WB_WITH_CUDA)
  if (d.side) {
    const auto index = d.device.index();
    const c10::cuda::CUDAStream compute = c10::cuda::getCurrentCUDAStream(index);
    if (!d.copyStream) d.copyStream = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index);
    torch::Tensor dx, dy;
    {
      c10::cuda::CUDAStreamGuard onCopyStream(*d.copyStream);
      dx = x.to(d.device, /*non_blocking=*/true);
      dy = y.to(d.device, /*non_blocking=*/true);
    }
    d.copied.record(*d.copyStream);
    d.copied.block(compute);
    // Allocated on the copy stream, used on the compute stream: keep the blocks until that is done.
    dx.record_stream(compute);
    dy.record_stream(compute);
    return {dx, dy};
  }
#endif
  return {x.to(d.device), y.to(d.device)};
}

}  // namespace wb::train
