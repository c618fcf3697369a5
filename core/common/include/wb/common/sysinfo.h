#pragma once
#include <cstdint>
#include <string>

namespace wb {

std::string hostName();
std::string cpuModel();
int logicalCores();
// True when /proc/cpuinfo lists the CPU feature flag (e.g. "avx512_bf16", "amx_bf16").
bool cpuHasFlag(const std::string& flag);
// Resident set size of this process now and its peak (VmHWM), in bytes; 0 when unknown.
int64_t currentRssBytes();
int64_t peakRssBytes();
// Resets the kernel's VmHWM counter (Linux: writes 5 to /proc/self/clear_refs). False if refused.
bool resetPeakRss();

}  // namespace wb
