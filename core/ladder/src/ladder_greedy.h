#pragma once
// The ladder's two runners behind runLadder (wb/ladder/ladder_run.h): the greedy one
// (ladder_greedy.cpp) and the cumulative one (ladder_run.cpp), and what they share.
#include <nlohmann/json.hpp>

#include "wb/ladder/ladder_run.h"

namespace wb::ladder {

Result<LadderOutcome> runGreedyLadder(const LadderOptions& options);

// The `ladder` event's steps: {index, key, added, skipped, note, isolated} each.
nlohmann::json planEventSteps(const std::vector<LadderStep>& plan);

}  // namespace wb::ladder
