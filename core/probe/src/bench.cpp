#include "bench.h"

#include <algorithm>

#include "wb/train/batch_copy.h"
#include "wb/train/compat.h"
#include "wb/train/evaluation.h"
#include "wb/train/memory_format.h"
#include "wb/train/optim.h"
#include "wb/train/step_mode.h"
#include "wb/train/trainer.h"

namespace wb::probe {

Status Bench::open(bool fp16Scaler) {
  if (auto errs = train::machineConfigErrors(c, 1); !errs.empty())
    return makeError(Errc::InvalidConfig, formatFieldErrors(errs));
  const int threads = c.train.threads > 0 ? c.train.threads : train::defaultThreads(c, 1);
  at::set_num_threads(threads);
  train::CpuMonitor::Options mo;
  mo.threads = threads;
  mo.adapt = c.train.threads <= 0;
  mo.cores = logicalCores();
  cpu = std::make_unique<train::CpuMonitor>(mo);
  const bool cuda = torch::cuda::is_available();
  if (cuda) device = torch::Device(torch::kCUDA, 0);
  torch::manual_seed(c.seed);
  const train::StepMode given = train::stepModeOf(c, cuda);
  mode.pin = given.pin, mode.bf16 = given.bf16, mode.fp16 = given.fp16;  // the layout stays NCHW until useMode

  auto splits = data::openSplits(c.data, c.seed);
  if (!splits.ok()) return splits.error();
  train = splits->train;
  val = splits->val;
  const auto& info = train->info();
  const int size = c.data.image_size > 0 ? c.data.image_size : info.height;
  if (size <= 0 || (c.data.image_size == 0 && info.height != info.width))
    return makeError(Errc::InvalidConfig, "data.image_size: 0 \u2014 the images of " + c.data.dataset +
                                              " vary in size; set data.image_size (e.g. 64)");
  if (train->size() < c.train.batch_size)
    return makeError(Errc::Data, "data: the training split has " + std::to_string(train->size()) +
                                     " samples, fewer than one batch; lower train.batch_size or raise data.limit_train");
  auto created = model::createModel({c.model.name, info.channels, info.num_classes, size});
  if (!created.ok()) return created.error();
  net = std::move(created.value());
  net->to(device);
  net->train(true);
  auto optimizer = train::makeOptimizer(c.optim, net->parameters());
  if (!optimizer.ok()) return optimizer.error();
  opt = std::move(optimizer.value());
  train::GradScalerOptions so;
  so.enabled = mode.fp16 || fp16Scaler;
  scaler = std::make_unique<train::GradScaler>(so, device);
  return {};
}

// One training step as the trainer takes it on one rank (copy, autocast forward, backward with
// loss scaling under fp16, optimiser).
void Bench::step(const torch::Tensor& xHost, const torch::Tensor& yHost) {
  if (auto note = cpu->poll()) say(*note);
  const auto x = train::inStepLayout(xHost.to(device, /*non_blocking=*/mode.pin), mode.channels_last);
  const auto y = yHost.to(device, /*non_blocking=*/mode.pin);
  torch::Tensor loss;
  {
    compat::AutocastGuard autocast(device.type(), mode.fp16 ? torch::kHalf : torch::kBFloat16, mode.bf16 || mode.fp16);
    loss = torch::nn::functional::cross_entropy(net->forward(x).to(torch::kFloat), y);
  }
  torch::optim::Optimizer& o = stepper ? *stepper : *opt;
  o.zero_grad();
  const bool scale = mode.fp16 && scaler->enabled();
  (scale ? scaler->scale(loss) : loss).backward();
  if (mode.bf16 || mode.fp16) compat::clearAutocastCache();
  if (scale) {
    scaler->step(o);
    scaler->update();
  } else {
    o.step();
  }
}

int64_t Bench::evaluate(data::Loader& loader, bool inference) {
  train::BatchCopier copier(device, mode.pin, mode.channels_last);
  return train::evaluatePass(*net, loader, copier, device, inference, mode.bf16).samples;
}

void Bench::useMode(const train::StepMode& m) {
  if (m.channels_last != mode.channels_last) train::layOutFourD(*net, m.channels_last);
  mode = m;
}

void Bench::useCudaSwitches(bool cudnnBenchmark, bool tf32) const {
  if (!device.is_cuda()) return;
  at::globalContext().setBenchmarkCuDNN(cudnnBenchmark);
  at::globalContext().setAllowTF32CuBLAS(tf32);
}

}  // namespace wb::probe
