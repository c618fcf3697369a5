#pragma once
// Private to wb_parallel: points in time on the device's own timeline, for the gradient buckets'
// statistics on NCCL. There a collective runs on NCCL's stream after the host has long moved on,
// so host clocks time the launch, not the collective: a point is a CUDA event recorded on the
// current stream (where the GPU has got to). A timeline without a device uses the host clock.
// Thread affinity: any thread, one at a time (the buckets' mutex guards it).
#include <cstddef>
#include <memory>

namespace wb::parallel {

class DeviceTimeline {
 public:
  // cuda: CUDA events (needs a build with NCCL, where one exists); else the host clock.
  explicit DeviceTimeline(bool cuda);
  ~DeviceTimeline();
  DeviceTimeline(const DeviceTimeline&) = delete;
  DeviceTimeline& operator=(const DeviceTimeline&) = delete;

  bool onDevice() const;
  // Records a point now (on the current CUDA stream) and returns its number.
  size_t mark();
  // Milliseconds from point a to point b (negative when b came first). On the device it first
  // waits until the stream has passed b.
  double msBetween(size_t a, size_t b);
  // Forgets every point (the next step's come from 0).
  void clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wb::parallel
