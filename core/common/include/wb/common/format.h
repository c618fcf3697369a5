#pragma once
// Numbers and ranks in messages: the one way core/common writes a double, or names the rank a
// message comes from, for a person to read.
#include <string>

#include "wb/common/result.h"

namespace wb {

// A duration a person types: "90" or "90s" (seconds), "10m", "1.5h", "1h30m". InvalidConfig
// naming `option` and the forms it takes for anything else, or for zero or less.
Result<double> parseDuration(const std::string& text, const std::string& option);

// Up to 6 significant digits, no trailing zeros: 0.01, 1e-06, 65536.
std::string shortNumber(double v);

// "rank N: message", unless the message already begins with "rank N" (a message handed up
// through several layers names its rank once, not once per layer).
std::string prefixedByRank(int rank, const std::string& message);

// The value of `key` in Slurm's one-line "Key=Value Key=Value" output (`scontrol show job -o`,
// `sacct`): "" when absent.
std::string slurmField(const std::string& text, const std::string& key);

}  // namespace wb
