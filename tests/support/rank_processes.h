#pragma once
// Real rank processes in tests: find a run's `workbench-cli worker` ranks, hang one for real,
// and kill whatever a failed test leaves running. Header-only (std + POSIX), for the tests of
// tests/app and tests/ui that stop and kill real runs.
#include <dirent.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wb::test {

// The pids of the processes whose command line (NUL-separated) `match` accepts.
template <class Match>
std::vector<pid_t> pidsWhoseCommandLine(Match match) {
  std::vector<pid_t> pids;
  DIR* d = ::opendir("/proc");
  if (!d) return pids;
  while (dirent* e = ::readdir(d)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
    const std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (match(cmd)) pids.push_back(std::atoi(e->d_name));
  }
  ::closedir(d);
  return pids;
}

// A process's command line (NUL-separated); "" once it is gone.
inline std::string commandLineOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The rank processes of the run in runDir: the `workbench-cli worker` processes whose command line
// names it, and the ranks its env.json lists (rank_pids: a rank started warm was forked, and runs
// under its command's name) while they live.
inline std::vector<pid_t> ranksOf(const std::string& runDir) {
  std::vector<pid_t> pids = pidsWhoseCommandLine([&](const std::string& cmd) {
    return cmd.find(std::string("worker\0", 7)) != std::string::npos && cmd.find(runDir) != std::string::npos;
  });
  std::ifstream in(runDir + "/env.json");
  const nlohmann::json env = nlohmann::json::parse(in, nullptr, false);
  if (!env.is_object() || !env.contains("rank_pids") || !env["rank_pids"].is_array()) return pids;
  for (const auto& p : env["rank_pids"]) {
    const pid_t pid = p.is_number_integer() ? p.get<pid_t>() : 0;
    const bool ours = pid > 0 && commandLineOf(pid).find("workbench") != std::string::npos;  // not a reused pid
    if (ours && std::find(pids.begin(), pids.end(), pid) == pids.end()) pids.push_back(pid);
  }
  return pids;
}

// How many processes' command lines mention `marker` (e.g. a run folder): none may outlive a run.
inline int processesMentioning(const std::string& marker) {
  return static_cast<int>(
      pidsWhoseCommandLine([&](const std::string& cmd) { return cmd.find(marker) != std::string::npos; }).size());
}

// Hangs pid for real: every thread ptrace-stopped, as a rank stuck in a driver call or held in a
// debugger (no signal but SIGKILL acts on it; a plain SIGSTOP would not do: the kernel sends
// SIGHUP to a stopped process whose process group is orphaned). Falls back to SIGSTOP where
// ptrace is not allowed. The threads are this thread's tracees until they die.
inline bool hang(pid_t pid) {
  bool traced = true;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  if (DIR* d = ::opendir(tasks.c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
      const pid_t tid = std::atoi(e->d_name);
      traced = traced && ::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) == 0 &&
               ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0;
    }
    ::closedir(d);
  }
  if (!traced) ::kill(pid, SIGSTOP);
  return traced;
}

// Whatever a failed test leaves running is killed on the way out.
struct KillOnExit {
  std::vector<pid_t> pids;
  ~KillOnExit() {
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
  }
};

}  // namespace wb::test
