#pragma once
// What the in-process probes share (the worker probe, the segments probe): the experiment's data,
// its model and optimiser, and one training step taken as the trainer takes it on one rank.
// Internal to wb_probe. Thread affinity: the caller's thread.
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "wb/train/step_mode.h"
#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/common/sysinfo.h"
#include "wb/data/dataset.h"
#include "wb/data/loader.h"
#include "wb/model/model.h"
#include "wb/train/grad_scaler.h"
#include "wb/train/host_use.h"

namespace wb::probe {

struct Bench {
  const Config& c;
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const std::string&)> progress;
  torch::Device device = torch::kCPU;
  // What step() does now (a probe switches it: useMode); its channels_last is the inputs' and the
  // 4-D weights' layout both.
  train::StepMode mode;
  torch::optim::Optimizer* stepper = nullptr;     // the optimiser step() uses; null: opt
  std::shared_ptr<data::Dataset> train, val;
  std::unique_ptr<model::Model> net;
  std::unique_ptr<torch::optim::Optimizer> opt;
  std::unique_ptr<train::GradScaler> scaler;
  std::unique_ptr<train::CpuMonitor> cpu;  // intra-op threads follow the free cores, as in the trainer

  bool stopped() const { return stop && stop->load(); }
  void say(const std::string& line) const {
    if (progress) progress(line);
  }
  void sync() const {
    if (device.is_cuda()) torch::cuda::synchronize();
  }

  // Opens the data, model and optimiser of `c`; `fp16Scaler`: a loss scaler for fp16 steps even
  // when c itself is not fp16 (a probe that switches precision).
  Status open(bool fp16Scaler = false);
  void step(const torch::Tensor& xHost, const torch::Tensor& yHost);
  // One evaluation pass over `loader` (the validation split), the trainer's own
  // (train::evaluatePass) in the bench's mode; the samples it evaluated.
  int64_t evaluate(data::Loader& loader, bool inference);
  // Steps (and evaluations) as `m` says from now on: the 4-D weights move only on a change of layout.
  void useMode(const train::StepMode& m);
  // cuDNN autotune and TF32 matmuls, LibTorch's global switches (CUDA only: nothing on the CPU).
  void useCudaSwitches(bool cudnnBenchmark, bool tf32) const;
  // The next batch of `loader`, starting the next epoch at the end of one.
  data::Batch nextBatch(data::Loader& loader, int& epoch) {
    for (;;) {
      if (auto b = loader.next()) return std::move(*b);
      loader.startEpoch(++epoch);
    }
  }
};

// Cores other processes used since `start`.
inline double otherCoresSince(const CpuTimes& start) { return cpuShareBetween(start, readCpuTimes()).other_cores; }

}  // namespace wb::probe
