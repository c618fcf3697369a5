#include "wb/common/processes.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

namespace wb {

namespace {

double ticksPerSecond() {
  static const double ticks = [] {
    const long t = ::sysconf(_SC_CLK_TCK);
    return t > 0 ? double(t) : 100.0;
  }();
  return ticks;
}

// The program a process runs ("" when it cannot be read: gone, or another user's).
std::string programOf(int pid) {
  char buf[4096];
  const std::string link = "/proc/" + std::to_string(pid) + "/exe";
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

}  // namespace

std::set<int> familyOf(const std::vector<int>& roots, const std::vector<ProcessStat>& all) {
  std::multimap<int, int> childrenOf;
  for (const ProcessStat& p : all) childrenOf.emplace(p.ppid, p.pid);
  std::set<int> family;
  std::vector<int> todo = roots;
  while (!todo.empty()) {
    const int pid = todo.back();
    todo.pop_back();
    if (!family.insert(pid).second) continue;
    for (auto [it, end] = childrenOf.equal_range(pid); it != end; ++it) todo.push_back(it->second);
  }
  return family;
}

int experimentRoot() {
  const std::string program = programOf(int(::getpid()));
  int root = int(::getpid());
  ProcessStat p;
  while (!program.empty() && readProcessStat(root, p) && p.ppid > 1 && programOf(p.ppid) == program) root = p.ppid;
  return root;
}

double familyCpuSeconds(int root, const std::vector<ProcessStat>& all) {
  const std::set<int> family = familyOf({root}, all);
  double seconds = 0;
  for (const ProcessStat& p : all)
    if (family.count(p.pid)) seconds += p.cpu_seconds + p.children_cpu_seconds;
  return seconds;
}

// /proc/PID/stat: "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
// utime stime cutime cstime priority nice threads itrealvalue starttime ..." (comm may hold spaces
// and parentheses, so the fields are read after its last ')').
std::string readProcessFile(int pid, const char* file) {
  const std::string path = "/proc/" + std::to_string(pid) + "/" + file;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string all;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) all.append(buf, size_t(n));
  ::close(fd);
  return n < 0 ? std::string() : all;
}

bool readProcessStat(int pid, ProcessStat& out) {
  const std::string stat = readProcessFile(pid, "stat");
  const auto open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= stat.size()) return false;
  long ppid = 0, pgrp = 0, sid = 0;
  unsigned long long utime = 0, stime = 0, start = 0;
  long long cutime = 0, cstime = 0;
  char state = '?';
  const int read = std::sscanf(stat.c_str() + close + 2,
                               "%c %ld %ld %ld %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld %*d %*d %*d %*d %llu",
                               &state, &ppid, &pgrp, &sid, &utime, &stime, &cutime, &cstime, &start);
  if (read < 4) return false;
  out.pid = pid;
  out.ppid = int(ppid);
  out.sid = int(sid);
  out.state = state;
  out.comm = stat.substr(open + 1, close - open - 1);
  const bool all = read == 9;
  out.cpu_seconds = all ? double(utime + stime) / ticksPerSecond() : 0;
  out.children_cpu_seconds = all ? double(cutime + cstime) / ticksPerSecond() : 0;
  out.start_ticks = all ? static_cast<long long>(start) : 0;
  return true;
}

std::vector<ProcessStat> allProcesses() {
  std::vector<ProcessStat> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    ProcessStat s;
    if (readProcessStat(std::atoi(e->d_name), s)) out.push_back(std::move(s));
  }
  ::closedir(d);
  return out;
}

std::vector<ProcessLoad> busiestOthers(const std::vector<ProcessStat>& before, const std::vector<ProcessStat>& after,
                                       double seconds, const std::vector<int>& ours, std::size_t most,
                                       double minCores) {
  if (seconds <= 0) return {};
  std::map<int, const ProcessStat*> earlier;
  for (const ProcessStat& p : before) earlier[p.pid] = &p;
  std::vector<int> roots = ours;
  roots.push_back(experimentRoot());
  roots.push_back(int(::getpid()));
  const std::set<int> left = familyOf(roots, after);
  std::vector<ProcessLoad> loads;
  for (const ProcessStat& p : after) {
    if (left.count(p.pid)) continue;
    const auto was = earlier.find(p.pid);
    const bool same = was != earlier.end() && was->second->start_ticks == p.start_ticks;
    const double cores = (p.cpu_seconds - (same ? was->second->cpu_seconds : 0)) / seconds;
    if (cores >= minCores) loads.push_back({p.pid, p.comm, cores});
  }
  std::sort(loads.begin(), loads.end(), [](const ProcessLoad& a, const ProcessLoad& b) { return a.cores > b.cores; });
  if (loads.size() > most) loads.resize(most);
  return loads;
}

std::string describeLoads(const std::vector<ProcessLoad>& loads) {
  std::string text;
  for (const ProcessLoad& l : loads) {
    char cores[32];
    std::snprintf(cores, sizeof cores, "%.1f", l.cores);
    text += (text.empty() ? "" : ", ") + l.name + " (pid " + std::to_string(l.pid) + ") " + cores + " cores";
  }
  return text;
}

}  // namespace wb
