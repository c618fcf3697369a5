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
// Memory the kernel says new work can have without swapping (/proc/meminfo MemAvailable), bytes;
// -1 when unknown.
int64_t memAvailableBytes();
// Resets the kernel's VmHWM counter (Linux: writes 5 to /proc/self/clear_refs). False if refused.
bool resetPeakRss();

// CPU accounting, to tell what a run got from what it asked for. All in seconds of CPU time.
struct CpuTimes {
  double process = 0;   // this process, every thread (getrusage RUSAGE_SELF: user + system)
  double machine_busy = 0;  // the whole machine, all cores (/proc/stat: everything but idle and iowait)
  double wall = 0;      // a monotonic clock, for rates between two readings
};
CpuTimes readCpuTimes();
// Cores' worth of CPU between two readings: what this process used, and what everything else on
// the machine used (machine busy minus this process; 0 when unknown). `others` subtracts further
// CPU seconds known to be ours (e.g. the ranks of one run, seen from their launcher).
struct CpuShare {
  double process_cores = 0;
  double other_cores = 0;
  double seconds = 0;
  // How far other_cores may be off: /proc/stat counts each core's busy time in clock ticks (10 ms
  // at USER_HZ 100), up to one tick per core at each reading, so a reading over 10 ms on 2 cores
  // cannot tell 0 from 2 cores. Shrinks as 1/seconds.
  double resolution_cores = 0;
};
CpuShare cpuShareBetween(const CpuTimes& a, const CpuTimes& b, double ownedElsewhere = 0);
// Other processes' use of the machine, in cores, that marks a measurement as contended.
inline constexpr double kContendedOtherCores = 0.3;
// The one rule: a measurement while other processes used otherCores is contended.
inline bool isContended(double otherCores) { return otherCores >= kContendedOtherCores; }

// Minor page faults of this process so far (getrusage ru_minflt).
int64_t minorPageFaults();
// Seconds since this process was started (its exec), from /proc/self/stat; 0 when unknown.
double processAgeSeconds();

}  // namespace wb
