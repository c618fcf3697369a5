#pragma once
#include <chrono>

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

}  // namespace wb
