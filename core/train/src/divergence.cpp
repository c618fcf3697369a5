#include "wb/train/divergence.h"

namespace wb::train {

std::string divergenceAdvice(const std::string& precision) {
  if (precision == "16-mixed") return "lower optim.lr, or use bf16-mixed or 32-true precision";
  if (precision == "bf16-mixed") return "lower optim.lr, or use 32-true precision";
  // 32-true has no more stable precision to offer.
  return "lower optim.lr (the run already uses 32-true precision)";
}

}  // namespace wb::train
