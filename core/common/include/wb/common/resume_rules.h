#pragma once
// What a resumed run may not change, in one wording wherever it is checked: by `run --resume`
// before the run folder is touched (app/cli, core/launch: against the run's events and
// config.json) and by each rank against the checkpoint it loads (core/train). `what` names the
// run folder or the checkpoint file. Errors are InvalidConfig (exit 2) naming the field.
#include <cstdint>
#include <string>

#include "wb/common/result.h"

namespace wb {

// --from: "last" (checkpoints/last.pt) or "best" (checkpoints/best.pt).
Status checkResumeFrom(const std::string& from);
// A run that has trained `trained` whole epochs has nothing left to train at train.epochs <= it.
Status checkEpochsLeft(const std::string& what, int64_t trained, int epochs);
// Optimiser state belongs to the optimiser that wrote it (`was`; empty: unknown, allowed).
Status checkSameOptimizer(const std::string& what, const std::string& was, const std::string& asked);

}  // namespace wb
