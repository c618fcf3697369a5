#pragma once
// Whether a change keeps the training's math, checked rather than assumed: from one seed, the
// baseline and the variant each train their first K steps in this process (the real trainer: its
// loader, model, optimiser, levers and evaluation), and their per-step losses are compared
// against a tolerance the result states. The baseline trains twice: what its own rerun differs by
// (nondeterministic kernels, intra-op threads) widens the tolerance, so nondeterminism is never
// read as a change of math. A change whose losses leave the tolerance is treated as changing the
// math, and the result says at which step and by how much.
//
// What one process cannot show is said, not pretended: a speedup that needs more ranks (devices,
// sharding) is checked by short whole-process trials instead, and one that moves where the run
// ends (early stopping) does not change the steps at all; its descriptor decides
// (wb/common/speedups.h). A speedup asked for but inactive on this machine (TF32 on a CPU) keeps
// the math here, and the result says it is inactive.
//
// A change of several fields (a search's candidate: loader workers, two devices, a larger batch)
// keeps the math only when every one of them does: a speedup's by its descriptor, a field no
// speedup owns (the batch, the optimiser's numbers) changes it unless it leaves the steps alone
// (the evaluation batch, logging, threads). Unchecked, the verdict names those that change it.
//
// One process, one rank; the caller's thread. Errors: InvalidConfig (the configs are invalid, or
// this machine cannot run them: the trainer's message, naming the field), Data, Model; Cancelled
// when `stop` is set.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/records/math_record.h"
#include "wb/render/table.h"

namespace wb::probe {

// The relative tolerance at step k is kMathTolerancePerStep x k: fp32 rounding differences (sums
// in another order) stay near 1e-7 of the loss over lenet's first 20 steps, and grow as training
// amplifies them; bf16's rounding (8-bit mantissa) moves it by 6e-6 at the first step, 1e-4 by the
// ninth (measured on Fashion-MNIST lenet, CPU).
inline constexpr double kMathTolerancePerStep = 2e-6;
// The baseline's own rerun deviation, times this, is also allowed (nondeterministic kernels).
inline constexpr double kMathRepeatFactor = 3.0;

struct MathCheckOptions {
  Config baseline, variant;
  int steps = 20;                                // K: training steps compared
  double tolerance_per_step = kMathTolerancePerStep;
  bool repeat_baseline = true;                   // train the baseline twice (its own noise)
  std::function<void(const std::string&)> progress;
  const std::atomic<bool>* stop = nullptr;
};

// The result's record (steps, deviations, verdict) lives with its readers: wb/records/math_record.h.
using MathStep = records::MathStep;
using MathCheckResult = records::MathCheckRecord;
using records::mathCheckJson;

Result<MathCheckResult> checkMath(const MathCheckOptions& options);

// The record checkMath gives, without training, for a change one process cannot check (more
// ranks, or where the run ends); nullopt when the steps can show it (checkMath trains them). The
// training split's size is read from the data (its files opened, nothing trained). Errors: as
// checkMath's for invalid configs.
Result<std::optional<MathCheckResult>> mathNotCheckable(const MathCheckOptions& options);

render::Table mathCheckTable(const MathCheckResult& result);

}  // namespace wb::probe
