#pragma once
// What to tell a run whose loss diverged. Pure (std only), so the advice is testable without a
// training run.
#include <string>

namespace wb::train {

// The fix for a diverged run in speedups.precision `precision` ("32-true" | "bf16-mixed" |
// "16-mixed"): always "lower optim.lr", plus the precisions more stable than the current one.
// Never advises the precision the run already uses. No leading separator, no final period.
std::string divergenceAdvice(const std::string& precision);

}  // namespace wb::train
