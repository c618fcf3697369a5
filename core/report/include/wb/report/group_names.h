#pragma once
// The runs of one experiment named apart: a search's trials, a try's pairs, the reference runs.
// They share much (a trial's shortened training, its limit on val images, its log interval) that
// says nothing about which is which, and named against the window's baseline each read the same
// few shared differences first ("512 val images, eval batch 512, +4 more"). Named against
// sharedReference instead, each reads what sets it apart ("devices 2, batch 256").
#include <vector>

#include <nlohmann/json.hpp>

namespace wb::report {

// `reference` with every field on which all of `runs` agree set to their shared value, so that
// differenceName(run, sharedReference(runs, reference)) names only what differs among them.
// Fewer than two runs: `reference` as it is.
nlohmann::json sharedReference(const std::vector<nlohmann::json>& runs, const nlohmann::json& reference);

}  // namespace wb::report
