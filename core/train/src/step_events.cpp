// The events one training run writes (start, step, eval, epoch, early_stop, warning) and its
// summary. The schema: the structs of wb/proto/event_types.h.
#include "training_run.h"

#include <cmath>
#include <set>

#include "wb/common/choices.h"
#include "wb/common/speedups.h"
#include "wb/common/sysinfo.h"
#include "wb/proto/config_json.h"
#include "wb/proto/event_types.h"
#include "wb/proto/flops_record.h"
#include "wb/train/machine_capabilities.h"

namespace wb::train::detail {
using nlohmann::json;

namespace {

proto::SpeedupStatus speedupStatus(bool requested, bool active, const std::string& note) {
  proto::SpeedupStatus s;
  s.requested = requested;
  s.active = active;
  s.note = note;
  return s;
}

std::string pinWithoutCuda() { return withoutWhatItNeeds(*findSpeedup(speedup::kPinMemory)); }

}  // namespace

json TrainingRun::event(const std::string& type) const { return proto::makeEvent(type, o_.rank, clock_.seconds()); }
void TrainingRun::emit(const json& ev) { sink_.write(ev); }

void TrainingRun::warn(const std::string& message, const std::string& path) {
  proto::WarningEvent w;
  w.message = message;
  if (!path.empty()) w.path = path;
  json ev = event(proto::WarningEvent::kType);
  proto::writeFields(w, ev);
  emit(ev);
}

void TrainingRun::emitStart() {
  const auto& tinfo = splits_.train->info();
  proto::StartEvent s;
  s.config = proto::configToJson(c_);
  s.versions = versionsJson();
  s.backend_check = backend_.toJson();
  s.host = {hostName(), cpuModel(), logicalCores()};
  s.device = device_.str();
  s.threads = threads_;
  s.host_use = {memoryNote_, autoThreads_ ? "automatic: the cores this rank's share of the machine has, fewer "
                                            "while other processes take cores"
                                          : "fixed by train.threads"};
  s.world_size = o_.world_size;
  s.local_rank = o_.local_rank;
  s.model = {net_->name(), net_->parameterCount()};
  s.dataset = {tinfo.name, static_cast<int64_t>(splits_.train->size()), static_cast<int64_t>(splits_.val->size()),
               tinfo.num_classes, tinfo.channels, imageSize_};
  s.steps_per_epoch = stepsPerEpoch_;
  s.total_steps = totalSteps_;
  s.batch = {c_.train.batch_size, static_cast<int64_t>(c_.train.batch_size) * o_.world_size,
             "train.batch_size is per rank; the global batch is batch_size x devices"};
  s.lr_scaling = schedule_->scalingJson();  // the effective lr and why (optim.lr_scaling)
  if (!o_.resume_from.empty()) s.resumed_from = proto::ResumedFrom{o_.resume_from, at_.epoch + 1, at_.batch_in_epoch, at_.iteration};
  s.speedups = speedups();
  if (group_->worldSize() > 1) s.dist = group_->describe();
  json ev = event(proto::StartEvent::kType);
  proto::writeFields(s, ev);
  emit(ev);
  if (backend_.mkldnn_disabled) warn(backend_.detail);
  if (!resumeNote_.empty()) warn(resumeNote_);
  if (!fineTuneNote_.empty()) warn(fineTuneNote_);
  if (c_.speedups.pin_memory && !pinActive_) warn("speedups.pin_memory: " + pinWithoutCuda());
  if (o_.rank == 0) warnDataProblems();
}

// What the dataset reader found that a run must say (an empty class folder, a link loop
// skipped): a warning each, once though both splits share the folder.
void TrainingRun::warnDataProblems() {
  std::set<std::string> said;
  for (const auto* split : {&splits_.train->info(), &splits_.val->info()})
    for (const auto& w : split->warnings)
      if (said.insert(w).second) warn(c_.data.dataset + ": " + w);
}

// Each speedup: asked for, active, and how (the `start` event's speedups).
std::map<std::string, proto::SpeedupStatus> TrainingRun::speedups() const {
  const auto& sp = c_.speedups;
  std::map<std::string, proto::SpeedupStatus> s;
  s[speedup::kWorkers] = speedupStatus(sp.workers > 0, sp.workers > 0,
                               std::to_string(sp.workers) + " loader thread(s)" +
                                   (sp.workers == 0 ? ": loading inside the training loop" : ""));
  s[speedup::kPinMemory] = speedupStatus(sp.pin_memory, pinActive_,
                                  pinActive_       ? "pinned staging buffers, non-blocking copies"
                                  : sp.pin_memory ? "not available: " + pinWithoutCuda()
                                                  : "off");
  s[speedup::kDevices] = speedupStatus(sp.devices > 1, o_.world_size > 1,
                               std::to_string(o_.world_size) + (cuda_ ? " GPU process(es), NCCL" : " CPU process(es), Gloo"));
  s[speedup::kPrecision] = speedupStatus(sp.precision != choice::kFp32, bf16_ || fp16_,
                                 fp16_  ? "fp16 autocast + dynamic loss scaling"
                                 : bf16_ ? std::string("bf16 autocast on ") + (cuda_ ? "CUDA" : "CPU")
                                         : "fp32");
  const bool es = stopper_->enabled();
  s[speedup::kEarlyStopping] = speedupStatus(
      es, es, es ? "monitor " + sp.early_stopping.monitor + ", patience " + std::to_string(sp.early_stopping.patience)
                 : "off");
  s[speedup::kSharding] = group_->shardingStatus();
  s[speedup::kInferenceEval] = speedupStatus(sp.inference_eval, sp.inference_eval,
                                      sp.inference_eval ? "InferenceMode, eval batch " + std::to_string(c_.train.eval_batch_size)
                                                        : "autograd on, train batch size (a naive loop)");
  leverStatuses(s);
  return s;
}

// The others (the levers past the recipe's): what their mechanism said where it was applied, else
// asked for (its setting in the table's words) and so active.
void TrainingRun::leverStatuses(std::map<std::string, proto::SpeedupStatus>& s) const {
  for (const Speedup& lever : speedupTable()) {
    if (s.count(lever.key)) continue;  // said by its own mechanism above
    if (auto it = levers_.find(lever.key); it != levers_.end()) {
      s[lever.key] = it->second;
      continue;
    }
    const bool asked = speedupRequested(lever, c_);
    s[lever.key] = speedupStatus(asked, asked, asked ? lever.setting(c_) : "off");
  }
}

// The interval since the last `step` event: its mean loss over every rank, throughput, the
// step-time split, memory, CPU and communication. Reads the device (a sync): log interval only.
// The same reduction sums the epoch's unreadable samples over the ranks: past what the whole
// epoch allows, every rank throws the same data::DataError (the loader's rule, for every device count).
void TrainingRun::emitStep(int epoch) {
  const double intervalMs = timer_->totalMs();
  trainMs_ += intervalMs;
  if (intervalSteps_ == 0) {
    timer_->reset();
    return;
  }
  double lossSums[3] = {lossAcc_.item<double>(), static_cast<double>(intervalSteps_),
                        static_cast<double>(trainLoader_->badThisEpoch())};
  group_->allReduceSum(lossSums, 3);  // the loss over every rank's samples, and the unreadable ones
  proto::StepEvent s;
  s.epoch = epoch + 1;
  s.step = at_.iteration;
  s.samples = at_.samples_seen;
  s.loss = lossSums[0] / lossSums[1];
  s.lr = schedule_->lrAt(std::max<int64_t>(0, at_.optimizer_steps - 1));
  s.samples_per_s = intervalMs > 0 ? intervalSamples_ * 1000.0 / intervalMs : 0.0;
  s.ms = timer_->averages(intervalSteps_);
  s.step_ms = intervalMs / static_cast<double>(intervalSteps_);
  s.mem = memoryUse(device_);
  peakBytes_ = std::max<int64_t>(peakBytes_, s.mem->peak.value_or(0));
  const int64_t faults = minorPageFaults();
  s.mem->page_faults_per_step = static_cast<double>(faults - faultsAt_) / static_cast<double>(intervalSteps_);
  faultsAt_ = faults;
  s.cpu = cpu_->interval();
  if (group_->worldSize() > 1) s.comm = group_->stats();
  if (scaler_->enabled()) s.amp = proto::AmpPart{scaler_->readScale(), scaler_->skippedSteps()};
  const double total = static_cast<double>(totalSteps_);
  s.progress = totalSteps_ > 0 ? static_cast<double>(at_.iteration) / total : 0.0;
  const int64_t done = at_.iteration - iterationAtStart_;  // steps of this life
  s.eta_s = done > 0 ? wall_.seconds() / static_cast<double>(done) * (total - static_cast<double>(at_.iteration)) : 0.0;
  s.flops = flopsFigures(static_cast<double>(intervalSamples_), intervalMs);
  json ev = event(proto::StepEvent::kType);
  proto::writeFields(s, ev);
  emit(ev);
  lossAcc_.zero_();
  intervalSteps_ = 0;
  intervalSamples_ = 0;
  timer_->reset();
  trainLoader_->judgeUnreadable(static_cast<int64_t>(std::llround(lossSums[2])));
}

void TrainingRun::emitEval(int epoch, const EvalResult& r) {
  proto::EvalEvent e;
  e.epoch = epoch + 1;
  e.step = at_.iteration;
  e.samples = at_.samples_seen;
  e.val_loss = r.loss;
  e.val_acc = r.acc;
  e.eval_ms = r.ms;
  e.eval_samples = r.samples;
  e.inference_mode = c_.speedups.inference_eval;
  e.mem = r.mem;
  json ev = event(proto::EvalEvent::kType);
  proto::writeFields(e, ev);
  emit(ev);
}

void TrainingRun::emitEvalAndEpoch(int epoch, const EvalResult& r, bool epochComplete) {
  emitEval(epoch, r);
  proto::EpochEvent p;
  p.epoch = epoch + 1;
  p.seconds = epochClock_.seconds();
  p.train_seconds = (trainMs_ - epochTrainMsAt_) / 1000.0;  // training steps only
  p.samples = epochSamples_;
  p.train_samples_per_s = p.train_seconds > 0 ? epochSamples_ / p.train_seconds : 0.0;
  p.samples_per_s = p.train_samples_per_s;
  p.train_loss = epochSteps_ > 0 ? epochLossAcc_.item<double>() / static_cast<double>(epochSteps_) : std::nan("");
  p.complete = epochComplete;
  json ep = event(proto::EpochEvent::kType);
  proto::writeFields(p, ep);
  emit(ep);
}

void TrainingRun::emitEarlyStop(int epoch, const EarlyStoppingDecision& decision) {
  proto::EarlyStopEvent e;
  e.reason = decision.reason;
  e.best_epoch = stopper_->bestEpoch();
  e.best_value = stopper_->bestValue();
  e.monitor = c_.speedups.early_stopping.monitor;
  e.epochs_saved = c_.train.epochs - (epoch + 1);
  json ev = event(proto::EarlyStopEvent::kType);
  proto::writeFields(e, ev);
  emit(ev);
}

// The trainer's part of summary.json (the launcher, or a rank started alone, completes it).
proto::RunSummary TrainingRun::summary() const {
  proto::RunSummary s;
  s.epochs = epochsRun_;
  s.steps = at_.iteration;
  s.optimizer_steps = at_.optimizer_steps;
  s.samples = at_.samples_seen;
  s.wall_s = loopWallS_ >= 0 ? loopWallS_ : wall_.seconds();
  // This life's samples over this life's training steps (samples_seen includes a resumed run's
  // earlier ones; evaluation and checkpoints have their own clocks).
  const int64_t trainSamples = at_.samples_seen - samplesAtStart_;
  s.train_samples = trainSamples;
  s.train_s = trainMs_ / 1000.0;
  s.train_samples_per_s = trainMs_ > 0 ? trainSamples / (trainMs_ / 1000.0) : 0.0;
  s.eval_s = evalS_;
  s.checkpoint_s = checkpointS_;
  if (firstStepAge_ >= 0) {
    s.time_to_first_step_s = firstStepAge_;  // from this process's start; a launcher counts from its own
    s.first_step_unix = firstStepUnix_;
  }
  s.cpu = cpu_->total();
  if (hostBeforeMs_ > 0 && hostAfterMs_ > 0)
    s.host_speed = proto::HostSpeedCheck{hostBeforeMs_, hostAfterMs_, "1-thread multiply-add over 64 KiB x96, best of 5"};
  s.best_val_acc = bestValAcc_;
  s.final_val_acc = lastValAcc_;
  s.best_val_loss = bestValLoss_;
  s.peak_mem = peakBytes_;
  s.device = device_.str();
  s.world_size = o_.world_size;
  if (scaler_->enabled()) s.amp_skipped = scaler_->skippedSteps();
  if (stopper_->enabled() && stopper_->bestEpoch() >= 0) {
    s.best_epoch = stopper_->bestEpoch();
    s.best_value = stopper_->bestValue();
  }
  if (stop_ == Stop::EarlyStopped && writeCheckpoints_) {
    s.best_weights_restored = bestWeightsNote_.empty();
    if (!bestWeightsNote_.empty()) s.best_weights_note = bestWeightsNote_;
  }
  if (c_.train.stop_at_accuracy > 0) {
    s.target_val_acc = c_.train.stop_at_accuracy;
    s.samples_to_target = samplesToTarget_;  // absent: not reached
    s.steps_to_target = stepsToTarget_;
  }
  if (!checkpointError_.empty()) s.error = checkpointError_;
  if (!lateCheckpoints_.empty()) s.checkpoints_late = lateCheckpoints_;
  const int64_t steps = at_.iteration - iterationAtStart_;
  proto::FlopsFigures f = flopsFigures(static_cast<double>(trainSamples), trainMs_);
  f.compute_only_step_ms = computeOnlyMs_;
  if (steps > 0) f.step_ms = trainMs_ / static_cast<double>(steps);
  s.flops = f;
  return s;
}

}  // namespace wb::train::detail
