// The plan as it will run here: the recipe's steps (ladder_plan.cpp), --lr-scaling, what this
// machine's config checks refuse, and --steps.
#include <algorithm>

#include "wb/ladder/ladder.h"

namespace wb::ladder {

namespace {

// A planned step this machine's config checks refuse (e.g. fp16 without CUDA) becomes skipped.
void refuseWhatTheMachineRejects(LadderStep& s, const MachineCheck& check) {
  if (s.skipped) return;
  auto errs = validate(s.config);
  if (check)
    for (auto& e : check(s.config)) errs.push_back(e);
  if (errs.empty()) return;
  s.skipped = true;
  s.note = formatFieldErrors(errs);
}

// --steps: the baseline and the listed steps run; the others stay in the plan, left out with a note.
Status keepOnlySteps(std::vector<LadderStep>& plan, const std::string& list) {
  std::vector<std::string> keys;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) keys.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  std::string known;
  for (const auto& s : plan) known += (known.empty() ? "" : ", ") + s.key;
  for (const auto& k : keys)
    if (std::none_of(plan.begin(), plan.end(), [&](const LadderStep& s) { return s.key == k; }))
      return makeError(Errc::InvalidConfig, "--steps: unknown step '" + k + "' (this plan has " + known + ")");
  for (auto& s : plan)
    if (s.key != "baseline" && !s.skipped && std::find(keys.begin(), keys.end(), s.key) == keys.end())
      s.skipped = true, s.note = "left out (--steps)";
  return {};
}

}  // namespace

Result<std::vector<LadderStep>> planForMachine(const Config& user, const nlohmann::json& capabilities,
                                               const PlanOptions& options, const MachineCheck& check) {
  auto plan = planLadder(user, capabilities, options.isolated);
  const std::string mode = options.lr_scaling.empty() ? defaultLadderLrScaling(user.optim) : options.lr_scaling;
  if (auto st = applyLadderLrScaling(plan, mode); !st.ok()) return st.error();
  for (auto& s : plan)  // the devices step says which rule and why
    if (s.key == "devices" && !s.skipped)
      s.note += (s.note.empty() ? "" : "; ") + lrScalingWhy(mode, user.optim);
  for (auto& s : plan) refuseWhatTheMachineRejects(s, check);
  if (!options.steps.empty())
    if (auto st = keepOnlySteps(plan, options.steps); !st.ok()) return st.error();
  return plan;
}

}  // namespace wb::ladder
