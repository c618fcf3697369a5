#include "training_run.h"

#include <algorithm>
#include <filesystem>

#include "wb/common/choices.h"
#include "wb/common/resume_rules.h"
#include "wb/common/speedups.h"
#include "wb/data/decoded_cache.h"
#include "wb/common/sysinfo.h"
#include "wb/data/loader_config.h"
#include "wb/proto/config_json.h"
#include "wb/train/machine_capabilities.h"
#include "wb/train/checkpoint.h"
#include "wb/train/compat.h"
#include "wb/train/divergence.h"
#include "wb/train/host_speed.h"
#include "wb/train/memory_format.h"
#include "wb/train/step_mode.h"

namespace wb::train::detail {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// fp16: an overflowing step is skipped and the scale halves; a loss that stays non-finite shows
// as a streak of skips or a scale below 1 (65536 halves below 1 after 17 straight overflows).
constexpr int64_t kMaxConsecutiveSkips = 25;

}  // namespace

TrainingRun::TrainingRun(const TrainerOptions& options, proto::EventSink& sink)
    : o_(options), c_(options.config), sink_(sink) {}
TrainingRun::~TrainingRun() = default;

Result<TrainOutcome> TrainingRun::run() {
  if (auto st = setUp(); !st) return st.error();
  if (auto st = resume(); !st) return st.error();
  hostBeforeMs_ = timeHostKernel();  // the host's own speed, before and after (wb/train/host_speed.h)
  emitStart();
  startLoop();
  for (int epoch = at_.epoch; epoch < c_.train.epochs && stop_ == Stop::None; ++epoch) {
    if (auto st = trainEpoch(epoch); !st) return st.error();
    if (stop_ == Stop::Cancelled || stop_ == Stop::Diverged || stop_ == Stop::ReachedTarget) break;
    if (auto st = evaluateAndCheckpoint(epoch); !st) return st.error();
  }
  restoreBestWeights();
  hostAfterMs_ = timeHostKernel();
  loopWallS_ = wall_.seconds();  // wall_s is the loop's: the compute-only steps come after it
  measureComputeOnly();          // after last.pt: the steps it takes move weights nobody saves
  return finish();
}

// ---- set up ----------------------------------------------------------------------------------

Status TrainingRun::setUp() {
  if (auto errs = machineConfigErrors(c_, o_.world_size); !errs.empty())
    return makeError(Errc::InvalidConfig, formatFieldErrors(errs));
  if (o_.world_size > 1 && !o_.comm)
    return makeError(Errc::Internal, "rank " + std::to_string(o_.rank) + ": world size " +
                                         std::to_string(o_.world_size) + " without a communicator");
  memoryNote_ = keepFreedMemory();
  autoThreads_ = c_.train.threads <= 0;
  const int localWorld = o_.local_world_size > 0 ? o_.local_world_size : o_.world_size;
  threads_ = autoThreads_ ? defaultThreads(c_, localWorld) : c_.train.threads;
  at::set_num_threads(threads_);
  auto backend = checkBackend(o_.comm);  // may switch oneDNN off; fails on a build that computes wrong
  if (!backend.ok()) return backend.error();
  backend_ = std::move(backend.value());
  cuda_ = torch::cuda::is_available();
  if (cuda_)
    device_ = torch::Device(torch::kCUDA,
                            static_cast<c10::DeviceIndex>(o_.local_rank % static_cast<int>(torch::cuda::device_count())));
  applyCudaLevers();
  torch::manual_seed(c_.seed);
  if (auto st = openData(); !st) return st;
  if (auto st = buildModel(); !st) return st;
  countFlops();
  writeCheckpoints_ = !o_.run_dir.empty() && o_.rank == 0;
  ckDir_ = (fs::path(o_.run_dir) / "checkpoints").string();
  return {};
}

Status TrainingRun::openData() {
  auto splits = data::openSplits(c_.data, c_.seed);
  if (!splits.ok()) return splits.error();
  splits_ = std::move(splits.value());
  const auto& tinfo = splits_.train->info();
  imageSize_ = c_.data.image_size > 0 ? c_.data.image_size : tinfo.height;
  if (imageSize_ <= 0 || (c_.data.image_size == 0 && tinfo.height != tinfo.width))
    return makeError(Errc::InvalidConfig, "data.image_size: 0 \u2014 the images of " + c_.data.dataset +
                                              " vary in size; set data.image_size (e.g. 64)");
  pinActive_ = c_.speedups.pin_memory && cuda_;
  auto cached = data::cacheDecodedSamples(splits_, c_);
  if (!cached.ok()) return cached.error();
  levers_[speedup::kDecodedCache] = {speedupRequested(*findSpeedup(speedup::kDecodedCache), c_), cached->active,
                                     cached->note, std::nullopt, std::nullopt};

  const data::LoaderOptions lo = data::trainLoaderOptions(c_, pinActive_, c_.speedups.workers, o_.rank, o_.world_size);
  trainLoader_ = std::make_unique<data::Loader>(splits_.train, lo);
  valLoader_ = std::make_unique<data::Loader>(splits_.val, data::evalLoaderOptions(c_, lo));
  copier_ = std::make_unique<BatchCopier>(device_, trainLoader_->pinMemoryActive(), c_.speedups.channels_last);

  auto onWarning = [this](const std::string& message, const std::string& path) { warn(message, path); };
  trainLoader_->setWarningHandler(onWarning);
  valLoader_->setWarningHandler(onWarning);
  stepsPerEpoch_ = trainLoader_->batchesPerEpoch();
  if (stepsPerEpoch_ == 0)
    return makeError(Errc::Data, "data: the training split has " + std::to_string(splits_.train->size()) +
                                     " samples, fewer than one batch per rank; lower train.batch_size "
                                     "or raise data.limit_train");
  totalSteps_ = stepsPerEpoch_ * c_.train.epochs;
  if (c_.train.max_steps > 0) totalSteps_ = std::min(totalSteps_, c_.train.max_steps);
  return {};
}

Status TrainingRun::buildModel() {
  const auto& tinfo = splits_.train->info();
  auto created = model::createModel({c_.model.name, tinfo.channels, tinfo.num_classes, imageSize_});
  if (!created.ok()) return created.error();
  net_ = std::move(created.value());
  net_->to(device_);
  net_->train(true);

  auto group = makeReplicaGroup(c_, o_.comm, *net_);
  if (!group.ok()) return group.error();
  group_ = std::move(group.value());
  auto optimizer = group_->makeOptimizer();
  if (!optimizer.ok()) return optimizer.error();
  opt_ = std::move(optimizer.value());
  layOutChannelsLast();
  if (const int n = c_.speedups.grad_accumulation; n > 1)
    levers_[speedup::kGradAccumulation] = {
        true, true,
        std::to_string(n) + " micro-batches of " + std::to_string(c_.train.batch_size) + " per optimiser step: an effective batch of " +
            std::to_string(int64_t{n} * c_.train.batch_size * o_.world_size) + " (x devices), one gradient reduction per step",
        std::nullopt, std::nullopt};
  const int64_t perEpoch = optimizerStepsPerEpoch();
  const int64_t optimizerSteps = c_.train.max_steps > 0 && c_.train.max_steps < stepsPerEpoch_ * c_.train.epochs
                                     ? (totalSteps_ + c_.speedups.grad_accumulation - 1) / c_.speedups.grad_accumulation
                                     : perEpoch * c_.train.epochs;
  schedule_ = std::make_unique<LrSchedule>(c_.optim, optimizerSteps, perEpoch, o_.world_size, c_.train.batch_size);

  const StepMode mode = stepModeOf(c_, cuda_);
  bf16_ = mode.bf16, fp16_ = mode.fp16;
  GradScalerOptions so;
  so.enabled = fp16_;
  scaler_ = std::make_unique<GradScaler>(so, device_);
  if (scaler_->enabled()) scaler_->setFoundInfReducer([g = group_.get()](double* v) { g->allReduceSum(v, 1); });
  stopper_ = std::make_unique<EarlyStopping>(c_.speedups.early_stopping);
  return {};
}

// The levers that are LibTorch's global switches: cuDNN autotune, TF32 matmuls (CUDA only).
void TrainingRun::applyCudaLevers() {
  for (const char* key : {speedup::kCudnnBenchmark, speedup::kTf32}) {
    const Speedup& s = *findSpeedup(key);
    const bool asked = speedupRequested(s, c_);
    levers_[key] = {asked, asked && cuda_, !asked ? "off" : cuda_ ? s.help : "not available: " + withoutWhatItNeeds(s),
                    std::nullopt, std::nullopt};
  }
  if (!cuda_) return;
  at::globalContext().setBenchmarkCuDNN(c_.speedups.cudnn_benchmark);
  at::globalContext().setAllowTF32CuBLAS(c_.speedups.tf32);
}

// Channels-last: every 4-D weight NHWC (the input batches follow in BatchCopier). After the
// replica group is made: DataParallel checks the parameters are contiguous and broadcasts them.
// Under ZeRO the weights stay NCHW (it shards them as flat contiguous ranges); NHWC inputs alone
// still make oneDNN and cuDNN run the convolutions channels-last.
void TrainingRun::layOutChannelsLast() {
  const bool asked = c_.speedups.channels_last;
  const bool sharded = c_.speedups.sharding != "off" && o_.world_size > 1;
  const int64_t laidOut = asked && !sharded ? train::layOutChannelsLast(*net_) : 0;
  std::string note = "off";
  if (asked && sharded) note = "the input batches NHWC; the weights stay NCHW: sharding splits them as flat contiguous ranges";
  else if (asked && laidOut > 0)
    note = std::to_string(laidOut) + " of " + std::to_string(net_->parameters().size()) +
           " parameter tensors (the convolutions' weights) and the input batches NHWC";
  else if (asked) note = net_->name() + " has no 4-D weights (no convolutions): nothing to lay out";
  levers_[speedup::kChannelsLast] = {asked, laidOut > 0 || (asked && sharded), note, std::nullopt, std::nullopt};
}

int64_t TrainingRun::optimizerStepsPerEpoch() const {
  const int64_t n = c_.speedups.grad_accumulation;
  return (stepsPerEpoch_ + n - 1) / n;
}

// ---- resume ----------------------------------------------------------------------------------

void TrainingRun::startLoop() {
  if (writeCheckpoints_) removeStaleTemporaries(ckDir_);  // from writers killed in an earlier life
  samplesAtStart_ = at_.samples_seen;
  iterationAtStart_ = at_.iteration;
  wall_.reset();
  timer_ = std::make_unique<StepTimer>(device_);
  const int localWorld = o_.local_world_size > 0 ? o_.local_world_size : o_.world_size;
  cpu_ = std::make_unique<CpuMonitor>(CpuMonitor::Options{threads_, autoThreads_, logicalCores(), localWorld});
  const auto on = [&](torch::ScalarType t) { return torch::TensorOptions().dtype(t).device(device_); };
  lossAcc_ = torch::zeros({}, on(torch::kFloat));
  epochLossAcc_ = torch::zeros({}, on(torch::kDouble));
  firstBad_ = torch::full({2}, -1.0, on(torch::kDouble));
}

Status TrainingRun::trainEpoch(int epoch) {
  epochClock_.reset();
  resetPeakMemory(device_);
  trainLoader_->startEpoch(epoch, at_.batch_in_epoch);
  batchInEpoch_ = at_.batch_in_epoch;
  at_.batch_in_epoch = 0;
  epochSteps_ = epochSamples_ = 0;
  epochLossAcc_.zero_();
  epochTrainMsAt_ = trainMs_;
  timer_->reset();
  faultsAt_ = minorPageFaults();
  try {
    for (;;) {
      if (stopAgreed()) stopPending_ = true;  // taken between optimiser steps: no half-accumulated gradient is lost
      if (stopPending_ && microOf(batchInEpoch_).first) {
        stop(Stop::Cancelled);
        break;
      }
      if (c_.train.max_steps > 0 && at_.iteration >= c_.train.max_steps) {
        stop(Stop::MaxSteps);
        break;
      }
      if (auto note = cpu_->poll()) warn(*note);
      timer_->setSampled((at_.iteration + 1) % c_.train.log_every == 0);
      timer_->begin();
      auto batch = trainLoader_->next();
      timer_->mark(StepTimer::Data);
      if (!batch) break;
      trainStep(*batch);
      if (fp16Divergence(false) || at_.iteration % c_.train.log_every == 0) {
        emitStep(epoch);
        if (checkDiverged()) break;
      }
      if (evaluationDue()) {
        evaluateWithinEpoch(epoch);
        if (stop_ == Stop::ReachedTarget) break;
      }
    }
    emitStep(epoch);
  } catch (const data::DataError& e) {
    return makeError(Errc::Data, e.what());
  }
  // A run stopped for its step cap, or already diverged, is not checked again.
  if (stop_ == Stop::None || stop_ == Stop::Cancelled) checkDiverged();
  // Keep the position so `run --resume` continues exactly here.
  if (stop_ == Stop::Cancelled) checkpoint("last", epoch, batchInEpoch_);
  return {};
}

// One batch: forward, backward, gradients across ranks, optimiser; the loss stays on the device.
void TrainingRun::trainStep(const data::Batch& batch) {
  StepTimer& timer = *timer_;
  auto [x, y] = copier_->toDevice(batch.x, batch.y);
  timer.mark(StepTimer::H2D);
  lastX_ = x;
  lastY_ = y;
  torch::Tensor loss;
  const Micro micro = microOf(batchInEpoch_);
  const bool stepped = computeStep(x, y, timer, loss, micro);
  if (scaler_->enabled() && micro.last && !stepped && scaler_->consecutiveSkips() == 1) {
    streakStart_ = at_.iteration + 1;
    streakLoss_ = loss.detach().item<double>();  // the scaler has synced to decide: free here
  }
  if (stepped) ++at_.optimizer_steps;  // an overflowing fp16 step skips the optimiser and the schedule
  auto detached = loss.detach();
  lossAcc_ += detached;
  epochLossAcc_ += detached.to(torch::kDouble);
  auto badNow = torch::logical_and(firstBad_[0] < 0, torch::logical_not(torch::isfinite(detached)));
  auto thisStep = torch::full({}, static_cast<double>(at_.iteration + 1), firstBad_.options());
  firstBad_.copy_(torch::where(badNow, torch::stack({thisStep, detached.to(torch::kDouble)}), firstBad_));
  timer.mark(StepTimer::Opt);
  if (firstStepAge_ < 0) firstStepAge_ = processAgeSeconds(), firstStepUnix_ = unixSeconds();
  ++at_.iteration;
  ++batchInEpoch_;
  ++intervalSteps_;
  ++epochSteps_;
  const int64_t globalSamples = batch.x.size(0) * o_.world_size;
  intervalSamples_ += globalSamples;
  epochSamples_ += globalSamples;
  at_.samples_seen += globalSamples;
}

// Groups of grad_accumulation batches from the epoch's start; an epoch's (or the step cap's) last
// batch closes a short group.
Micro TrainingRun::microOf(int64_t batchInEpoch) const {
  const int n = c_.speedups.grad_accumulation;
  Micro m;
  m.count = n;
  m.first = batchInEpoch % n == 0;
  m.last = batchInEpoch % n == n - 1 || batchInEpoch + 1 >= stepsPerEpoch_ ||
           (c_.train.max_steps > 0 && at_.iteration + 1 >= c_.train.max_steps);
  return m;
}

// The arithmetic of a step on a batch already on the device: forward, backward, gradients across
// ranks, optimiser. False when fp16 loss scaling skipped the optimiser, or when the batch is not
// the last micro-batch of its step (its gradients only accumulate, and no rank communicates).
bool TrainingRun::computeStep(const torch::Tensor& x, const torch::Tensor& y, StepTimer& timer, torch::Tensor& loss,
                              const Micro& micro) {
  group_->syncBuffers();
  {
    compat::AutocastGuard autocast(device_.type(), fp16_ ? torch::kHalf : torch::kBFloat16, bf16_ || fp16_);
    auto logits = net_->forward(x);
    loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat), y);
  }
  timer.mark(StepTimer::Fwd);
  if (micro.first) {
    opt_->zero_grad();
    group_->prepareBackward();
  }
  group_->setGradientSync(micro.last);
  const torch::Tensor share = micro.count > 1 ? loss / micro.count : loss;  // the step's loss: the micro-batches' mean
  (scaler_->enabled() ? scaler_->scale(share) : share).backward();
  if (bf16_ || fp16_) compat::clearAutocastCache();
  timer.mark(StepTimer::Bwd);
  if (!micro.last) return false;
  group_->finishBackward();
  timer.mark(StepTimer::Comm);
  setLearningRate(*opt_, schedule_->lrAt(at_.optimizer_steps));
  if (!scaler_->enabled()) {
    opt_->step();
    return true;
  }
  const bool stepped = scaler_->step(*opt_);
  scaler_->update();
  return stepped;
}

// ---- evaluate and checkpoint -----------------------------------------------------------------

Status TrainingRun::evaluateAndCheckpoint(int epoch) {
  const bool epochComplete = batchInEpoch_ >= stepsPerEpoch_;
  epochsRun_ = epoch + 1;
  EvalResult ev;
  try {
    ev = evaluate(*net_, *valLoader_, *copier_, device_, c_.speedups.inference_eval, bf16_, *group_);
  } catch (const data::DataError& e) {
    return makeError(Errc::Data, e.what());
  }
  recordEvaluation(ev);
  emitEvalAndEpoch(epoch, ev, epochComplete);

  const double monitored = c_.speedups.early_stopping.monitor == choice::kMonitorValAcc ? ev.acc : ev.loss;
  // The tracker keeps the best with early stopping off too (best.pt); only on does it stop.
  const EarlyStoppingDecision decision = stopper_->update(epoch + 1, monitored);
  if (decision.improved) {
    at_.best_metric = monitored;
    checkpoint("best", epoch + 1, 0);
  }
  checkpoint("last", epochComplete ? epoch + 1 : epoch, epochComplete ? 0 : batchInEpoch_);
  if (reachedTarget(ev.acc)) return {};  // the answer is in: early stopping's word is not needed
  if (decision.stop) {
    stop(Stop::EarlyStopped);
    emitEarlyStop(epoch, decision);
  }
  return {};
}

void TrainingRun::recordEvaluation(const EvalResult& ev) {
  evalS_ += ev.ms / 1000.0;
  lastValAcc_ = ev.acc;
  if (std::isnan(bestValAcc_) || ev.acc > bestValAcc_) bestValAcc_ = ev.acc;
  if (std::isnan(bestValLoss_) || ev.loss < bestValLoss_) bestValLoss_ = ev.loss;
  peakBytes_ = std::max<int64_t>(peakBytes_, ev.mem.peak.value_or(0));
}

// train.eval_every_steps: an evaluation between an epoch's steps, so the step a target is reached
// at is known finer than an epoch. Not on an epoch's last batch, nor at the step cap (the epoch's
// own evaluation follows), nor inside an accumulation group. The same on every rank: evaluation
// is collective.
bool TrainingRun::evaluationDue() const {
  const int64_t every = c_.train.eval_every_steps;
  if (every <= 0 || at_.iteration % every != 0 || stop_ != Stop::None || stopPending_) return false;
  if (batchInEpoch_ >= stepsPerEpoch_ || (c_.train.max_steps > 0 && at_.iteration >= c_.train.max_steps)) return false;
  return microOf(batchInEpoch_).first;
}

// The evaluation's event (no epoch event: the epoch goes on); a target reached here ends the run
// with last.pt at this step, so a resumed run continues from it. Early stopping counts epochs'
// evaluations only. Data errors propagate to trainEpoch, which reports them.
void TrainingRun::evaluateWithinEpoch(int epoch) {
  const EvalResult ev = evaluate(*net_, *valLoader_, *copier_, device_, c_.speedups.inference_eval, bf16_, *group_);
  recordEvaluation(ev);
  emitEval(epoch, ev);
  if (!reachedTarget(ev.acc)) return;
  epochsRun_ = epoch + 1;
  checkpoint("last", epoch, batchInEpoch_);
}

// Train to target: the first evaluation at or above train.stop_at_accuracy ends the run, and
// when (samples over every rank and life, training steps) goes to the summary.
bool TrainingRun::reachedTarget(double valAcc) {
  const double target = c_.train.stop_at_accuracy;
  if (target <= 0 || !(valAcc >= target)) return false;
  samplesToTarget_ = at_.samples_seen;
  stepsToTarget_ = at_.iteration;
  message_ = "reached the target: val_acc " + fmt(valAcc) + " >= " + fmt(target) + " at step " +
             std::to_string(at_.iteration) + " (" + std::to_string(at_.samples_seen) + " samples)";
  stop(Stop::ReachedTarget);
  return true;
}

// ---- stopping --------------------------------------------------------------------------------

bool TrainingRun::stopRequested() const { return o_.stop_flag && o_.stop_flag->load(); }

// Every rank must stop at the same step, or the next collectives mismatch (one rank in the
// gradient all-reduce, another writing its checkpoint: Gloo "connection reset"). The signal
// reaches ranks at different moments, so with more than one rank they agree on it at every
// log_every-th iteration (the same on all ranks): one small all-reduce per log interval, not a
// device sync per step.
bool TrainingRun::stopAgreed() { return group_->agreeOnStop(stopRequested(), at_.iteration, c_.train.log_every); }

std::optional<std::string> TrainingRun::fp16Divergence(bool readScale) const {
  if (!scaler_->enabled()) return std::nullopt;
  const int64_t streak = scaler_->consecutiveSkips();
  const double scale = readScale ? scaler_->readScale() : 1.0;
  if (streak < kMaxConsecutiveSkips && !(readScale && scale < 1.0)) return std::nullopt;
  return "fp16 loss scaling gave up: " + std::to_string(streak) + " consecutive overflowing steps from step " +
         std::to_string(streakStart_) + " (loss " + fmt(streakLoss_) + "), scale " + fmt(scaler_->readScale()) +
         "; " + divergenceAdvice(c_.speedups.precision);
}

// Reads the device's first non-finite loss (a sync): call it at the log interval only.
bool TrainingRun::checkDiverged() {
  std::optional<std::string> why = fp16Divergence(true);
  if (!why && !fp16_) {  // under fp16 a non-finite loss is a skipped step; the scaler decides
    auto bad = firstBad_.cpu();
    const double badStep = bad[0].item<double>();
    if (badStep >= 0)
      why = "loss became non-finite at step " + std::to_string(static_cast<int64_t>(badStep)) + " (loss " +
            fmt(bad[1].item<double>()) + "); " + divergenceAdvice(c_.speedups.precision);
  }
  if (!why) return false;
  message_ = *why;
  stop(Stop::Diverged);
  return true;
}

// ---- checkpoints -----------------------------------------------------------------------------

TrainOutcome TrainingRun::finish() {
  TrainOutcome out;
  switch (stop_) {
    case Stop::Cancelled: out.status = proto::kStatusCancelled; break;
    case Stop::Diverged: out.status = proto::kStatusDiverged; break;
    case Stop::EarlyStopped: out.status = proto::kStatusEarlyStopped; break;
    default: out.status = proto::kStatusOk; break;
  }
  out.message = message_;
  settleCheckpoints();
  if (!checkpointError_.empty()) {
    out.status = proto::kStatusFailed;
    out.message = checkpointError_;
  }
  out.summary = summary();
  if (!out.message.empty()) out.summary.message = out.message;
  return out;
}

}  // namespace wb::train::detail
