#pragma once
#include <cstdint>
#include <string>

namespace wb {

std::string hostName();
std::string cpuModel();
int logicalCores();
// Resident set size of this process now and its peak (VmHWM), in bytes; 0 when unknown.
int64_t currentRssBytes();
int64_t peakRssBytes();
// Resets the kernel's VmHWM counter (Linux: writes 5 to /proc/self/clear_refs). False if refused.
bool resetPeakRss();

}  // namespace wb
