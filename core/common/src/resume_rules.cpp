#include "wb/common/resume_rules.h"

namespace wb {

Status checkResumeFrom(const std::string& from) {
  if (from == "last" || from == "best") return {};
  return makeError(Errc::InvalidConfig, "--from " + from + ": pass --from last or --from best, with --resume RUN_DIR");
}

Status checkEpochsLeft(const std::string& what, int64_t trained, int epochs) {
  if (trained < epochs) return {};
  const std::string n = std::to_string(trained);
  return makeError(Errc::InvalidConfig, "train.epochs: " + what + " has already trained " + n +
                                            " epoch(s) and this run asks for " + std::to_string(epochs) +
                                            "; resume with --set train.epochs=N (N > " + n + ") to train further");
}

Status checkSameOptimizer(const std::string& what, const std::string& was, const std::string& asked) {
  if (was.empty() || was == asked) return {};
  return makeError(Errc::InvalidConfig, "optim.name: " + what + " was trained with " + was + " and this run asks for " +
                                            asked + "; resume with the same optimiser (--set optim.name=" + was +
                                            "), or start a new run to change it");
}

}  // namespace wb
