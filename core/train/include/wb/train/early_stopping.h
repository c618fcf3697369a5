#pragma once
// Early stopping as in Lightning's EarlyStopping callback: monitor val_loss or val_acc, mode
// min/max, patience counted in evaluations (0 = off), min_delta, check_finite, optional
// stopping threshold.
#include <cstdint>
#include <map>
#include <string>

#include "wb/common/config.h"

namespace wb::train {

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
  int bestEpoch() const { return best_epoch_; }
  double bestValue() const { return best_; }
  int waitCount() const { return wait_; }
  std::map<std::string, double> state() const;
  void loadState(const std::map<std::string, double>& state);

 private:
  EarlyStoppingConfig config_;
  double best_;
  int best_epoch_ = -1;
  int wait_ = 0;
};

}  // namespace wb::train
