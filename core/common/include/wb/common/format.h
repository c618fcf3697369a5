#pragma once
// Numbers and ranks in messages: the one way core/common writes a double, or names the rank a
// message comes from, for a person to read.
#include <string>

namespace wb {

// Up to 6 significant digits, no trailing zeros: 0.01, 1e-06, 65536.
std::string shortNumber(double v);

// "rank N: message", unless the message already begins with "rank N" (a message handed up
// through several layers names its rank once, not once per layer).
std::string prefixedByRank(int rank, const std::string& message);

}  // namespace wb
