#pragma once
// The machine's processes as /proc describes them: one reader of /proc/PID/stat for everything
// that asks about a process (what a run left behind, a stalled rank, what else used the CPU
// while a run was timed).
#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace wb {

struct ProcessStat {
  int pid = 0, ppid = 0, sid = 0;
  char state = '?';            // R, S, D, T (stopped), t (traced), Z (zombie), ...
  std::string comm;            // the command's name (at most 15 characters)
  double cpu_seconds = 0;      // user + system time of all its threads so far
  double children_cpu_seconds = 0;  // ... of its children that ended and were waited for (and theirs)
  long long start_ticks = 0;   // when it started, in clock ticks since boot: a reused pid differs
  bool dead() const { return state == 'Z' || state == 'X' || state == 'x'; }
};

// False when the process is gone or its stat cannot be read.
bool readProcessStat(int pid, ProcessStat& out);

// The whole of /proc/PID/<file> ("stat", "cmdline"); "" when the process is gone, even mid-read
// (the kernel then fails the read with ESRCH, which a C++ stream turns into an exception).
std::string readProcessFile(int pid, const char* file);
// Every process this one can see.
std::vector<ProcessStat> allProcesses();

// The experiment this process belongs to: the topmost of its unbroken line of ancestors that run
// this same program (a `workbench-cli try` above the `workbench-cli probe segments` it started),
// else this process. Every process an experiment starts (its runs' ranks, the tools it runs, what
// those leave) descends from it; a process of another command, even the same program's, does not.
int experimentRoot();
// `roots` and everything below them in `all`.
std::set<int> familyOf(const std::vector<int>& roots, const std::vector<ProcessStat>& all);
// The CPU seconds so far of `root` and its descendants in `all`: each one's own and its waited-for
// children's, so a descendant that ended and was reaped by one of them stays counted. Between two
// snapshots the difference is what the family used meanwhile.
double familyCpuSeconds(int root, const std::vector<ProcessStat>& all);

// A process's use of the CPU between two snapshots, in cores.
struct ProcessLoad {
  int pid = 0;
  std::string name;
  double cores = 0;
};
// The processes that used the most CPU between `before` and `after` (taken `seconds` apart),
// busiest first: at most `most`, each at least `minCores`. Left out: this process's experiment
// (experimentRoot() and everything below it: the runs it has side by side are its own, not other
// load) and each of `ours` with its descendants (a launcher's ranks: their time is the run's). A
// process that started in between counts from its start; one that ended in between is not seen.
std::vector<ProcessLoad> busiestOthers(const std::vector<ProcessStat>& before, const std::vector<ProcessStat>& after,
                                       double seconds, const std::vector<int>& ours, std::size_t most = 3,
                                       double minCores = 0.05);
// "stress-ng (pid 812) 1.0 cores, python3 (pid 90) 0.2 cores"; "" for none.
std::string describeLoads(const std::vector<ProcessLoad>& loads);

}  // namespace wb
