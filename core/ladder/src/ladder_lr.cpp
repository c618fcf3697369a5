// The ladder's --lr-scaling: the devices step (and what builds on it) at equal accuracy.
#include "wb/common/lr_scaling.h"
#include "wb/ladder/ladder.h"

namespace wb::ladder {
using namespace report;
using namespace stats;   // estimates, verdicts and the rounds rule
using namespace render;  // tables and charts

std::string defaultLadderLrScaling(const OptimConfig& optim) {
  if (optim.lr_scaling != "none") return optim.lr_scaling;
  return optim.name == "adam" || optim.name == "adamw" ? "sqrt" : "linear";
}

std::string lrScalingWhy(const std::string& mode, const OptimConfig& optim) {
  if (mode == "linear")
    return "linear lr scaling (" + optim.name + ": Goyal et al. 2017, the lr grows with the global batch)";
  if (mode == "sqrt") return "sqrt lr scaling (" + optim.name + ": adaptive steps overshoot under linear scaling)";
  return "no lr scaling (--lr-scaling none: the larger global batch trains at optim.lr)";
}

Status applyLadderLrScaling(std::vector<LadderStep>& plan, const std::string& mode) {
  if (mode != "none" && mode != "linear" && mode != "sqrt")
    return makeError(Errc::InvalidConfig, "--lr-scaling " + mode + ": must be one of none, linear, sqrt");
  for (auto& step : plan) {
    if (step.config.speedups.devices <= 1) continue;
    step.config.optim.lr_scaling = mode;  // a skipped step's config too: it is what would have run
    if (mode == "none" || step.skipped) continue;
    // Only the steps that bring the devices say it (devices, and sharding alone): the later
    // cumulative ones inherit it.
    if (step.key != "devices" && !step.isolated) continue;
    const LrScaling s = lrScaling(step.config.optim, step.config.speedups.devices, 0, step.config.train.batch_size);
    step.added += ", lr " + lrScalingLabel(s);
  }
  return {};
}

}  // namespace wb::ladder
