#pragma once
// Early stopping as in Lightning's EarlyStopping callback: monitor val_loss or val_acc, mode
// min/max, patience counted in evaluations (0 = off), min_delta, check_finite, optional
// stopping threshold.
//
// update() is called once per evaluation with the monitored value. A value improves on the
// best when it is better by MORE than min_delta (min: value < best - min_delta; max:
// value > best + min_delta); then wait resets, otherwise wait counts up and the run stops
// when it reaches patience, i.e. exactly `patience` evaluations after the best one.
// check_finite: a nan/inf value stops at once. stopping_threshold (0 = none): stops once the
// value is better than it (min: value < t; max: value > t). Unlike Lightning, a value that
// crosses the threshold still counts as an improvement first, so the epoch that reached it
// becomes best.pt.
// Disabled (patience 0): best/improved are still tracked (best.pt works without early
// stopping) but update() never asks to stop.
// Any mode other than "max" means "min". Thread affinity: none (plain value type).
// Pure logic, so it lives here: the trainer (core/train) stops by it and the early-stopping
// what-if (core/report/whatif.h) replays finished runs through it.
#include <cstdint>
#include <map>
#include <string>

#include "wb/common/choices.h"
#include "wb/common/config.h"

namespace wb {

struct EarlyStoppingDecision {
  bool improved = false;   // this evaluation is the new best (save best.pt)
  bool stop = false;
  std::string reason;      // why it stops, in words, e.g. "val_loss did not improve by more than 0 for 3 evaluations (best 0.31 at epoch 4)"
};

class EarlyStopping {
 public:
  explicit EarlyStopping(const EarlyStoppingConfig& config);
  bool enabled() const { return config_.patience > 0; }
  EarlyStoppingDecision update(int epoch, double value);
  int bestEpoch() const { return best_epoch_; }       // -1 before the first finite value
  double bestValue() const { return best_; }          // +inf (min) / -inf (max) before it
  int waitCount() const { return wait_; }
  const EarlyStoppingConfig& config() const { return config_; }
  // For checkpoints: keys "best", "best_epoch", "wait". loadState() takes the keys present.
  std::map<std::string, double> state() const;
  void loadState(const std::map<std::string, double>& state);

 private:
  bool maximize() const { return config_.mode == choice::kModeMax; }
  bool better(double a, double b) const { return maximize() ? a > b : a < b; }
  EarlyStoppingConfig config_;
  double best_;
  int best_epoch_ = -1;
  int wait_ = 0;
};

}  // namespace wb
