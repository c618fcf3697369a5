#pragma once
// The greedy ladder's runner (ladder_greedy.cpp), behind runLadder (wb/ladder/ladder_run.h).
#include "wb/ladder/ladder_run.h"

namespace wb::ladder {

Result<LadderOutcome> runGreedyLadder(const LadderOptions& options);

}  // namespace wb::ladder
