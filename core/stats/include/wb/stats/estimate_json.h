#pragma once
// A speedup estimate (wb/stats/stats.h) as JSON, for ladder.json, the runner's pair events and
// `try --json`: {point, lo, hi, pairs, verdict ("faster" | "slower" | "within noise" | "1 run
// each: no interval"), method, noise_band}; null for a number that is not finite. Readers take
// what is there (an old file without estimates reads as no interval).
#include <nlohmann/json.hpp>

#include "wb/stats/stats.h"

namespace wb::stats {

nlohmann::json estimateJson(const SpeedupEstimate& estimate);
SpeedupEstimate estimateFromJson(const nlohmann::json& j);
// The verdict named by verdictWord; NoInterval for anything else.
Verdict verdictFromWord(const std::string& word);

}  // namespace wb::stats
