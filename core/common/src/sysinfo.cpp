#include "wb/common/sysinfo.h"
#include "wb/common/clock.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace wb {

double unixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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

}  // namespace wb
