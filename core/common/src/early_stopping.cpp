#include "wb/common/early_stopping.h"

#include "wb/common/format.h"

#include <cmath>
#include <limits>

namespace wb {
EarlyStopping::EarlyStopping(const EarlyStoppingConfig& config) : config_(config) {
  best_ = maximize() ? -std::numeric_limits<double>::infinity()
                     : std::numeric_limits<double>::infinity();
}

EarlyStoppingDecision EarlyStopping::update(int epoch, double value) {
  EarlyStoppingDecision d;
  const bool finite = std::isfinite(value);
  if (finite) {
    // min_delta shifts the value against the direction of improvement, as Lightning does.
    const double shifted = maximize() ? value - config_.min_delta : value + config_.min_delta;
    if (better(shifted, best_)) {
      d.improved = true;
      best_ = value;
      best_epoch_ = epoch;
      wait_ = 0;
    } else {
      ++wait_;
    }
  } else {
    ++wait_;  // a nan never compares better: it counts as no improvement
  }
  if (!enabled()) return d;

  const std::string& m = config_.monitor;
  const std::string best_text = "(best " + shortNumber(best_) + " at epoch " + std::to_string(best_epoch_) + ")";
  if (config_.check_finite && !finite) {
    d.stop = true;
    d.reason = m + " = " + shortNumber(value) + " at epoch " + std::to_string(epoch) + " is not finite " + best_text;
  } else if (config_.stopping_threshold != 0.0 && finite && better(value, config_.stopping_threshold)) {
    d.stop = true;
    d.reason = m + " = " + shortNumber(value) + " reached the stopping threshold " +
               (maximize() ? "> " : "< ") + shortNumber(config_.stopping_threshold) + " at epoch " +
               std::to_string(epoch) + " " + best_text;
  } else if (wait_ >= config_.patience) {
    d.stop = true;
    d.reason = m + " did not improve by more than " + shortNumber(config_.min_delta) + " for " +
               std::to_string(wait_) + " evaluations " + best_text;
  }
  return d;
}

std::map<std::string, double> EarlyStopping::state() const {
  return {{"best", best_}, {"best_epoch", static_cast<double>(best_epoch_)},
          {"wait", static_cast<double>(wait_)}};
}

void EarlyStopping::loadState(const std::map<std::string, double>& state) {
  if (auto it = state.find("best"); it != state.end()) best_ = it->second;
  if (auto it = state.find("best_epoch"); it != state.end()) best_epoch_ = static_cast<int>(it->second);
  if (auto it = state.find("wait"); it != state.end()) wait_ = static_cast<int>(it->second);
}

}  // namespace wb
