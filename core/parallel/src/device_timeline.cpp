#include "device_timeline.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "data_parallel_impl.h"

#if WB_PARALLEL_HAVE_NCCL
#include <ATen/cuda/CUDAEvent.h>
#endif

namespace wb::parallel {

struct DeviceTimeline::Impl {
  bool cuda = false;
  std::vector<double> host;  // seconds
#if WB_PARALLEL_HAVE_NCCL
  std::vector<at::cuda::CUDAEvent> events;
#endif
};

DeviceTimeline::DeviceTimeline(bool cuda) : impl_(std::make_unique<Impl>()) {
#if WB_PARALLEL_HAVE_NCCL
  impl_->cuda = cuda;
#else
  if (cuda) throw std::logic_error("DeviceTimeline: this build has no CUDA events (built without NCCL)");
#endif
}

DeviceTimeline::~DeviceTimeline() = default;

bool DeviceTimeline::onDevice() const { return impl_->cuda; }

size_t DeviceTimeline::mark() {
#if WB_PARALLEL_HAVE_NCCL
  if (impl_->cuda) {
    impl_->events.emplace_back(cudaEventDefault);  // timing on (CUDAEvent's default turns it off)
    impl_->events.back().record();                 // on the current stream of the current device
    return impl_->events.size() - 1;
  }
#endif
  impl_->host.push_back(nowSeconds());
  return impl_->host.size() - 1;
}

double DeviceTimeline::msBetween(size_t a, size_t b) {
#if WB_PARALLEL_HAVE_NCCL
  if (impl_->cuda) {
    impl_->events.at(b).synchronize();
    impl_->events.at(a).synchronize();
    return static_cast<double>(impl_->events[a].elapsed_time(impl_->events[b]));
  }
#endif
  return (impl_->host.at(b) - impl_->host.at(a)) * 1000.0;
}

void DeviceTimeline::clear() {
  impl_->host.clear();
#if WB_PARALLEL_HAVE_NCCL
  impl_->events.clear();
#endif
}

double overlapShare(double first_launch, double backward_end, double last_done) {
  const double window = last_done - first_launch;
  if (!(window > 0)) return 0.0;
  const double before = std::clamp(std::min(backward_end, last_done) - first_launch, 0.0, window);
  return before / window;
}

}  // namespace wb::parallel
