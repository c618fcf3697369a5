#include "wb/common/format.h"

#include <sstream>

namespace wb {

std::string shortNumber(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

std::string prefixedByRank(int rank, const std::string& message) {
  const std::string who = "rank " + std::to_string(rank);
  const bool named = message.compare(0, who.size(), who) == 0 &&
                     (message.size() == who.size() || message[who.size()] == ':' || message[who.size()] == ' ');
  return named ? message : who + ": " + message;
}

}  // namespace wb
