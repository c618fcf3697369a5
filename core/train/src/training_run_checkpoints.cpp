// The training run's checkpoints: resuming from one, writing them (last and best), settling them
// at the end and restoring the best weights.
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

namespace wb::train::detail {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

torch::Tensor cpuGeneratorState() {
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

void setCpuGeneratorState(const torch::Tensor& state) {
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

}  // namespace

Status TrainingRun::resume() {
  if (o_.resume_from.empty()) return {};
  auto ck = loadCheckpoint(o_.resume_from);
  if (!ck.ok()) return ck.error();
  if (auto st = net_->loadState(ck->params, ck->buffers); !st.ok())
    return makeError(Errc::Checkpoint, o_.resume_from + ": " + st.error().message +
                                           " (the checkpoint was written for another model; start a new run)");
  const json written = json::parse(ck->config_json, nullptr, false);
  // Optimiser state belongs to one optimiser: another one cannot take it (LibTorch asserts).
  const std::string wasOptim =
      written.is_object() ? written.value(json::json_pointer("/optim/name"), std::string()) : std::string();
  if (auto st = checkSameOptimizer(o_.resume_from, wasOptim, c_.optim.name); !st) return st;
  if (auto st = group_->loadOptimizerState(ck->optimizer_state); !st) return st;
  scaler_->loadState(ck->scaler);
  // Fine-tuning on another dataset (run --fine-tune): the best metric and early stopping were
  // measured on the other data's validation set, so they start afresh here.
  const std::string wasData =
      written.is_object() ? written.value(json::json_pointer("/data/dataset"), std::string()) : std::string();
  const bool otherData = !wasData.empty() && !sameDataset(wasData, c_.data.dataset);
  if (!otherData) stopper_->loadState(ck->early_stopping);
  else fineTuneNote_ = "fine-tuning on " + c_.data.dataset + " the weights trained on " + wasData +
                       ": best.pt and early stopping start afresh on this dataset's validation set";
  if (ck->rng_state.defined()) setCpuGeneratorState(ck->rng_state);
  at_.epoch = ck->epoch;
  at_.batch_in_epoch = ck->batch_in_epoch;
  at_.optimizer_steps = ck->global_step;
  at_.samples_seen = ck->samples_seen;
  at_.iteration =
      ck->extra.count("iteration") ? static_cast<int64_t>(ck->extra.at("iteration")) : at_.optimizer_steps;
  if (ck->extra.count("best_metric") && !otherData) at_.best_metric = ck->extra.at("best_metric");
  // A checkpoint written while early stopping was off kept the best in best_metric alone.
  if (stopper_->bestEpoch() < 0 && std::isfinite(at_.best_metric)) stopper_->loadState({{"best", at_.best_metric}});
  if (at_.batch_in_epoch == 0)  // a whole number of epochs trained
    if (auto st = checkEpochsLeft(o_.resume_from, at_.epoch, c_.train.epochs); !st) return st;
  // Written by another number of ranks (or batch size): a step there is another number of
  // samples here. Continue at the same sample in the epoch, and the schedule at the same share.
  const int64_t wasGlobalBatch = written.is_object()
                                     ? written.value(json::json_pointer("/train/batch_size"), int64_t{0}) *
                                           written.value(json::json_pointer("/speedups/devices"), int64_t{1})
                                     : 0;
  const int64_t globalBatch = static_cast<int64_t>(c_.train.batch_size) * o_.world_size;
  if (wasGlobalBatch > 0 && wasGlobalBatch != globalBatch) {
    at_.batch_in_epoch = at_.batch_in_epoch * wasGlobalBatch / globalBatch;
    at_.iteration = at_.epoch * stepsPerEpoch_ + at_.batch_in_epoch;
    at_.optimizer_steps = at_.iteration;
    resumeNote_ = "the checkpoint was written with a global batch of " + std::to_string(wasGlobalBatch) +
                  " and this run's is " + std::to_string(globalBatch) + " (" + std::to_string(o_.world_size) +
                  " rank(s) x " + std::to_string(c_.train.batch_size) +
                  "): it continues at the same sample of epoch " + std::to_string(at_.epoch + 1) +
                  " and the same point of the LR schedule, in steps of the new batch";
  }
  return {};
}

// ---- train an epoch --------------------------------------------------------------------------

// Collective under ZeRO (the optimiser state is consolidated on every rank); rank 0 writes.
Status TrainingRun::writeCheckpoint(const std::string& kind, int epoch, int64_t batchInEpoch) {
  CheckpointData d;
  d.config_json = proto::configToJson(c_).dump();
  d.epoch = epoch;
  d.batch_in_epoch = batchInEpoch;
  d.global_step = at_.optimizer_steps;
  d.samples_seen = at_.samples_seen;
  d.params = net_->namedParameters();
  d.buffers = net_->namedBuffers();
  d.optimizer_state = group_->consolidatedOptimizerState();
  d.scaler = scaler_->state();
  d.early_stopping = stopper_->state();
  d.extra["iteration"] = static_cast<double>(at_.iteration);
  if (!std::isnan(at_.best_metric)) d.extra["best_metric"] = at_.best_metric;
  d.rng_state = cpuGeneratorState();
  if (!writeCheckpoints_) return {};
  std::error_code ec;
  fs::create_directories(ckDir_, ec);
  const std::string path = (fs::path(ckDir_) / (kind + ".pt")).string();
  if (auto st = saveCheckpoint(path, d); !st.ok()) return st;
  json ev = event(proto::CheckpointEvent::kType);
  proto::writeFields(proto::CheckpointEvent{kind, path, epoch, batchInEpoch, at_.iteration}, ev);
  emit(ev);
  return {};
}

// A checkpoint that is not written is a warning at once, and training goes on: a later write
// of the same kind (the next epoch's last.pt, a better epoch's best.pt) supersedes it, and then
// nothing is lost. settleCheckpoints() decides at the end.
void TrainingRun::checkpoint(const std::string& kind, int epoch, int64_t batchInEpoch) {
  Stopwatch took;
  Status st = writeCheckpoint(kind, epoch, batchInEpoch);
  checkpointS_ += took.seconds();
  const auto missed = missedCheckpoints_.find(kind);
  const int shownEpoch = batchInEpoch > 0 ? epoch + 1 : epoch;  // 1-based: the epoch it holds (or is in)
  if (st.ok()) {
    if (missed == missedCheckpoints_.end()) return;
    lateCheckpoints_.push_back(kind + ".pt of epoch " + std::to_string(missed->second.epoch) +
                               " was not written then (" + missed->second.why + "); epoch " + std::to_string(shownEpoch) +
                               "'s replaced it");
    missedCheckpoints_.erase(missed);
    return;
  }
  const std::string path = (fs::path(ckDir_) / (kind + ".pt")).string();
  warn(kind + ".pt was not written: " + st.error().message + " (free space or fix permissions in " + ckDir_ +
           "; a later write of it makes up for it)",
       path);
  if (missed != missedCheckpoints_.end())  // an earlier miss of the same kind is superseded, still unwritten
    lateCheckpoints_.push_back(kind + ".pt of epoch " + std::to_string(missed->second.epoch) +
                               " was never written (" + missed->second.why + ")");
  missedCheckpoints_[kind] = {shownEpoch, st.error().message};
}

// What the checkpoints folder holds at the end against what the run claims: a kind whose last
// write failed (last.pt behind the trained position, best.pt not the best epoch's weights) fails
// the run, naming it; misses that later writes superseded are a warning and the summary's
// checkpoints_late, and the run ends as it trained.
void TrainingRun::settleCheckpoints() {
  for (const auto& [kind, missed] : missedCheckpoints_)
    checkpointError_ += (checkpointError_.empty() ? "" : "; ") + kind + ".pt of epoch " +
                        std::to_string(missed.epoch) + " was not written (" + missed.why + ") and no later write " +
                        "replaced it, so " + ckDir_ + " does not hold what this run reached (free space or fix " +
                        "permissions there, then run again)";
  if (!lateCheckpoints_.empty() && checkpointError_.empty()) {
    std::string said;
    for (const auto& l : lateCheckpoints_) said += (said.empty() ? "" : "; ") + l;
    warn("checkpoints written late, nothing lost: " + said, ckDir_);
  }
}

// ---- finish ----------------------------------------------------------------------------------

// Early stopping restores the best weights (best.pt holds them). If it cannot, the run says so:
// a warning naming the file, and the summary's best_weights_restored = false with the reason.
void TrainingRun::restoreBestWeights() {
  if (stop_ != Stop::EarlyStopped || !writeCheckpoints_) return;
  const std::string path = (fs::path(ckDir_) / "best.pt").string();
  auto best = loadCheckpoint(path);
  Status st = best.ok() ? net_->loadState(best->params, best->buffers) : Status(best.error());
  if (st.ok()) return;
  bestWeightsNote_ = "the best weights were not restored from " + path + ": " + st.error().message +
                     "; the model holds the last epoch's weights";
  warn(bestWeightsNote_, path);
}

}  // namespace wb::train::detail
