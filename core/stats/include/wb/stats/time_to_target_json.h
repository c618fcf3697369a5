#pragma once
// Samples to target and time to target as JSON, for the reference runs an experiment stores and the
// composed verdicts try, the ladder and tune store beside their estimates (estimate_json.h writes
// the SpeedupEstimate inside). Numbers that are not finite are null. Readers are tolerant like
// estimateFromJson: a missing key, null or a value of another type keeps the member's default,
// except for reference runs, where a run without its samples is refused (the error names it).
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"
#include "wb/stats/convergence.h"
#include "wb/stats/log_estimate.h"
#include "wb/stats/time_to_target.h"

namespace wb::stats {

// {value, log_se, df}; df ∞ is written as null (and read back as exact).
nlohmann::json logEstimateJson(const LogEstimate& e);
LogEstimate logEstimateFromJson(const nlohmann::json& j);

// [{samples, reached, seed}, ...]
nlohmann::json targetRunsJson(const std::vector<TargetRun>& runs);
// Errors name the run and the field: "runs[2].samples must be a number > 0".
Result<std::vector<TargetRun>> targetRunsFromJson(const nlohmann::json& j);

// Words for the enums, and back ("more samples needed"...; "exact" | "at least" | "at most" |
// "unknown"); anything else reads as NoInterval / Exact.
std::string samplesBoundWord(SamplesBound bound);
SamplesBound samplesBoundFromWord(const std::string& word);
SamplesVerdict samplesVerdictFromWord(const std::string& word);

nlohmann::json samplesComparisonJson(const SamplesComparison& c);
SamplesComparison samplesComparisonFromJson(const nlohmann::json& j);

nlohmann::json timeToTargetJson(const TimeToTargetEstimate& e);
TimeToTargetEstimate timeToTargetFromJson(const nlohmann::json& j);

}  // namespace wb::stats
