#pragma once
// Moves the loader's batches to the training device (the trainer's steps and the evaluation).
//   CPU:                    the batch as it is, no copy.
//   CUDA, pageable memory:  copies on the current (compute) stream, as a plain loop does.
//   CUDA, pinned memory:    the loader's batch (images and labels) lies in page-locked memory;
//                           non_blocking copies run on a side stream from the pool, the compute
//                           stream waits on a CUDA event recorded after them, and the device
//                           tensors are recorded as used by the compute stream so the caching
//                           allocator does not hand out their memory while a kernel still reads it.
//                           The host returns at once; the copy overlaps the kernels still queued
//                           on the compute stream (the previous step's).
// Thread affinity: the training thread (the current device and stream are that thread's).
#include <memory>
#include <utility>

#include <torch/torch.h>

namespace wb::train {

class BatchCopier {
 public:
  // pinned: the batches come in pinned memory (data::Loader::pinMemoryActive()); only then, and
  // only on a CUDA device, does the side stream exist.
  // channelsLast (speedups.channels_last): 4-D images come out NHWC on the device.
  BatchCopier(torch::Device device, bool pinned, bool channelsLast = false);
  ~BatchCopier();
  BatchCopier(const BatchCopier&) = delete;
  BatchCopier& operator=(const BatchCopier&) = delete;

  // x and y on the device, ready for kernels queued on the current stream after this call.
  std::pair<torch::Tensor, torch::Tensor> toDevice(const torch::Tensor& x, const torch::Tensor& y);
  // True when copies go on a side stream (CUDA and pinned).
  bool sideStream() const;

 private:
  std::pair<torch::Tensor, torch::Tensor> copy(const torch::Tensor& x, const torch::Tensor& y);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wb::train
