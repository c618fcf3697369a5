#include "wb/common/format.h"

#include <cstdio>

#include <cmath>

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

std::string fmtFixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// An edge past 1000x bounds nothing a person can use (a handful of cut runs with one degree of
// freedom can put it at 1e30): it reads as unbounded rather than as thirty digits.
std::string fmtEdge(double x) {
  if (std::isnan(x)) return "–";
  if (x >= 1000) return "∞";
  return fmtFixed(x, x < 100 ? 2 : 0);
}

std::string fmtSeconds(double s) {
  if (!std::isfinite(s)) return "–";
  if (s < 10) return fmtFixed(s, 2) + " s";
  if (s < 100) return fmtFixed(s, 1) + " s";
  if (s < 600) return fmtFixed(s, 0) + " s";
  const long total = std::lround(s);
  char buf[64];
  if (total < 3600)
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", total / 60, total % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", total / 3600, (total % 3600) / 60);
  return buf;
}

std::string fmtSpeedup(double x) {
  if (!std::isfinite(x)) return "–";
  return fmtFixed(x, x < 10 ? 2 : 1) + "×";
}

std::string fmtRatio(double x) { return fmtSpeedup(x); }

std::string fmtAccuracy(double acc01) {
  if (!std::isfinite(acc01)) return "–";
  return fmtFixed(acc01 * 100.0, 2) + " %";
}

std::string fmtPp(double pp) {
  if (!std::isfinite(pp)) return "–";
  const double r = std::round(pp * 100.0) / 100.0;
  if (r == 0) return "±0.00 pp";
  return std::string(r > 0 ? "+" : "−") + fmtFixed(std::fabs(r), 2) + " pp";
}

std::string fmtBytes(double bytes) {
  if (!std::isfinite(bytes) || bytes <= 0) return "–";
  const double mib = bytes / (1024.0 * 1024.0);
  if (mib < 1) return fmtFixed(bytes / 1024.0, 0) + " KiB";
  if (mib < 1024) return fmtFixed(mib, mib < 10 ? 1 : 0) + " MiB";
  return fmtFixed(mib / 1024.0, 2) + " GiB";
}

std::string fmtRate(double perSecond) {
  if (!std::isfinite(perSecond) || perSecond <= 0) return "–";
  if (perSecond < 10000) return fmtFixed(perSecond, 0) + "/s";
  if (perSecond < 1e6) return fmtFixed(perSecond / 1000.0, 1) + "k/s";
  return fmtFixed(perSecond / 1e6, 2) + "M/s";
}

}  // namespace wb
