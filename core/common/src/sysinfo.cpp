#include "wb/common/sysinfo.h"

#include "wb/common/clock.h"
#include "wb/common/processes.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <ctime>
#include <iterator>
#include <fstream>
#include <sstream>
#include <vector>
#include <string>
#include <thread>

namespace wb {

double unixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string utcNowIso() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string hostName() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(line.find_first_not_of(" \t", pos + 1));
    }
  }
  return "unknown";
}

bool cpuHasFlag(const std::string& flag) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    const auto pos = line.find(':');
    if (pos == std::string::npos) continue;
    const std::string flags = " " + line.substr(pos + 1) + " ";
    return flags.find(" " + flag + " ") != std::string::npos;
  }
  return false;
}

int logicalCores() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

namespace {
int64_t statusField(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string k = key;
  while (std::getline(in, line)) {
    if (line.rfind(k, 0) == 0) {
      return std::stoll(line.substr(k.size())) * 1024;  // "VmRSS:   1234 kB"
    }
  }
  return 0;
}
}  // namespace

int64_t currentRssBytes() { return statusField("VmRSS:"); }
int64_t peakRssBytes() { return statusField("VmHWM:"); }

bool resetPeakRss() {
  std::ofstream out("/proc/self/clear_refs");
  if (!out) return false;
  out << "5";
  return static_cast<bool>(out);
}

namespace {
double ticksPerSecond() {
  static const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return hz > 0 ? hz : 100.0;
}

double boottimeSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The aggregate "cpu" line of /proc/stat: busy (not idle, not iowait) seconds over all cores.
double machineBusySeconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  in >> cpu;
  if (cpu != "cpu") return 0;
  double busy = 0, v = 0;
  for (int field = 0; field < 8 && (in >> v); ++field)
    if (field != 3 && field != 4) busy += v;  // user nice system [idle iowait] irq softirq steal
  return busy / ticksPerSecond();
}
}  // namespace

CpuTimes readCpuTimes() {
  CpuTimes t;
  rusage ru{};
  if (::getrusage(RUSAGE_SELF, &ru) == 0)
    t.process = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  t.machine_busy = machineBusySeconds();
  t.wall = boottimeSeconds();
  return t;
}

CpuShare cpuShareBetween(const CpuTimes& a, const CpuTimes& b, double ownedElsewhere) {
  CpuShare s;
  s.seconds = b.wall - a.wall;
  if (s.seconds <= 0) return s;
  s.process_cores = (b.process - a.process) / s.seconds;
  if (a.machine_busy > 0 && b.machine_busy > 0) {
    const double other = (b.machine_busy - a.machine_busy) - (b.process - a.process) - ownedElsewhere;
    s.other_cores = std::max(0.0, other / s.seconds);
    s.resolution_cores = logicalCores() / (ticksPerSecond() * s.seconds);
  }
  return s;
}

int64_t minorPageFaults() {
  rusage ru{};
  return ::getrusage(RUSAGE_SELF, &ru) == 0 ? static_cast<int64_t>(ru.ru_minflt) : 0;
}

double processAgeSeconds() {
  ProcessStat self;
  if (!readProcessStat(static_cast<int>(::getpid()), self)) return 0;
  return std::max(0.0, boottimeSeconds() - static_cast<double>(self.start_ticks) / ticksPerSecond());
}

int64_t memAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    long long kb = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %lld kB", &kb) == 1) return kb * 1024;
  }
  return -1;
}

}  // namespace wb
