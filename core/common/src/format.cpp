#include "wb/common/format.h"

#include <sstream>

namespace wb {

std::string shortNumber(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

}  // namespace wb
