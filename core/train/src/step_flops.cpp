// The run's arithmetic: FLOPs per step (wb::model's counter, once, before training), the rate
// each step event and the summary report against the peaks the caller gave, and the same step
// on a batch already in memory after training (the data path's cost).
#include <algorithm>

#include "training_run.h"

namespace wb::train::detail {

// One forward on a zero batch of the training shape (eval mode, no grad: neither BatchNorm
// statistics nor the random generator move). A model whose forward fails here fails the first
// training step with the real error; the count just says it has none.
void TrainingRun::countFlops() {
  const auto& info = splits_.train->info();
  const auto x = torch::zeros({c_.train.batch_size, info.channels, imageSize_, imageSize_},
                              torch::TensorOptions().device(device_));
  auto count = model::countForwardFlops(*net_, x);
  if (count.ok())
    flops_ = std::move(count.value());
  else
    flopsError_ = count.error().message;
}

// The rate over `samples` global samples trained in `ms` of training steps (a short last batch
// counts its own samples, not a whole batch).
proto::FlopsFigures TrainingRun::flopsFigures(double samples, double ms) const {
  proto::FlopsFigures f = o_.peaks;
  if (!f.peak && f.no_peak.empty()) f.no_peak = "no peak given to the trainer";
  if (!flops_) {
    f.uncounted = flopsError_.empty() ? "not counted" : flopsError_;
    return f;
  }
  f.per_step = flops_->trainingStep() * o_.world_size;  // every rank trains a batch
  f.per_sample = flops_->trainingPerSample();
  f.uncounted = flops_->uncountedNote();
  f.achieved_gflop_per_s = ms > 0 ? f.per_sample * samples / (ms / 1000.0) / 1e9 : 0.0;
  return f;
}

// The median of `compute_only_steps` steps on the last batch, after one warm-up, each synced.
// One rank only: with several, every rank would have to take them together (their all-reduce).
void TrainingRun::measureComputeOnly() {
  const int n = o_.compute_only_steps;
  if (n <= 0 || o_.world_size > 1 || !lastX_.defined() || stop_ == Stop::Cancelled || stop_ == Stop::Diverged) return;
  StepTimer scratch(device_);
  torch::Tensor loss;
  auto sync = [&] {
    if (device_.is_cuda()) torch::cuda::synchronize();
  };
  const auto scalerState = scaler_->state();  // its skips and scale stay the training's
  computeStep(lastX_, lastY_, scratch, loss);
  sync();
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    Stopwatch step;
    computeStep(lastX_, lastY_, scratch, loss);
    sync();
    ms.push_back(step.ms());
  }
  scaler_->loadState(scalerState);
  std::sort(ms.begin(), ms.end());
  computeOnlyMs_ = ms[ms.size() / 2];
}

}  // namespace wb::train::detail
