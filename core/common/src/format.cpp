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

namespace wb {

Result<double> parseDuration(const std::string& text, const std::string& option) {
  const auto bad = [&] {
    return makeError(Errc::InvalidConfig, option + " '" + text + "': not a duration (give e.g. 90s, 10m, 1.5h or 1h30m)");
  };
  double total = 0;
  size_t at = 0;
  bool any = false;
  while (at < text.size()) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text.substr(at), &used);
    } catch (...) {
      return bad();
    }
    if (used == 0 || !(v >= 0) || text[at] == '-' || text[at] == '+' || text[at] == ' ') return bad();
    at += used;
    double unit = 1;
    if (at < text.size()) {
      const char u = text[at++];
      unit = u == 's' ? 1 : u == 'm' ? 60 : u == 'h' ? 3600 : -1;
      if (unit < 0) return bad();
    } else if (any) {
      return bad();  // "1h30": the last number needs its unit
    }
    total += v * unit;
    any = true;
  }
  if (!any || !(total > 0)) return bad();
  return total;
}

std::string slurmField(const std::string& text, const std::string& key) {
  const std::string k = key + "=";
  for (size_t at = text.find(k); at != std::string::npos; at = text.find(k, at + 1)) {
    if (at != 0 && text[at - 1] != ' ' && text[at - 1] != '\n') continue;
    const size_t from = at + k.size();
    return text.substr(from, text.find_first_of(" \n", from) - from);
  }
  return "";
}

}  // namespace wb
