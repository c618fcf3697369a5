#pragma once
#include <chrono>
#include <string>

namespace wb {

// Monotonic stopwatch; seconds as double.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  void reset() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  double ms() const { return seconds() * 1000.0; }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Seconds since the Unix epoch (wall clock, for timestamps in files).
double unixSeconds();
// Now as UTC, ISO 8601 to the second ("2026-12-05T13:40:00Z"): the timestamp every file carries.
std::string utcNowIso();

}  // namespace wb
