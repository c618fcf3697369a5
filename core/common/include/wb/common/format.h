#pragma once
// Numbers in messages: the one way core/common writes a double for a person to read.
#include <string>

namespace wb {

// Up to 6 significant digits, no trailing zeros: 0.01, 1e-06, 65536.
std::string shortNumber(double v);

}  // namespace wb
