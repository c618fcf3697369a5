#pragma once
// How a training process uses its host, so that its step time measures the training and not
// accidents of the machine:
//  - keepFreedMemory(): glibc's malloc hands large freed blocks back to the kernel (mmap'd
//    blocks above a threshold it moves at run time, and heap tops above a trim threshold), and
//    the next step faults the same pages in again. How often depends on where buffers happen to
//    land (the path of the run folder, the environment, the launcher), which made the same
//    config 1x-4x slower by accident. Fixed thresholds and no trimming keep a step's memory.
//  - CpuMonitor: what the run got against what it asked for (its CPU time against wall time,
//    and the machine's other load from /proc/stat), and, when the thread count is automatic,
//    intra-op threads that follow the cores really free: an OpenMP team that waits at each
//    barrier for a thread the kernel has descheduled runs lenet 2-3x slower on two threads than
//    on one (and up to 10x in bad cases) when another process takes a core.
// Thread affinity: the training thread.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "wb/common/clock.h"
#include "wb/common/sysinfo.h"
#include "wb/proto/event_types.h"
#include "wb/proto/run_summary.h"

namespace wb::train {

// Sets malloc's thresholds for a training process; returns what it did, for the start event.
std::string keepFreedMemory();

class CpuMonitor {
 public:
  struct Options {
    int threads = 1;        // intra-op threads asked for (the most it will use)
    bool adapt = false;     // follow the free cores (train.threads = 0, automatic)
    int cores = 1;          // logical cores of the machine
    int local_world = 1;    // ranks on this host: each counts the others as other load, so only
                            // a lone rank can call itself contended (its launcher judges the run)
    double period_s = 0.25;  // how often it reads the clocks (two periods agreeing change threads)
  };
  explicit CpuMonitor(Options o);

  // Call at each step boundary: cheap unless a period has passed. Returns a message when it
  // changed the number of intra-op threads (the caller reports it as a warning).
  std::optional<std::string> poll();
  int threads() const { return threads_; }

  // Cores used by this process and by everything else since the last interval() (or start):
  // the step event's cpu.
  proto::CpuPart interval();
  // The same over the whole training so far, plus asked_cores, min_threads and, for a lone
  // rank, the contended verdict: the summary's cpu (a launcher replaces it with its own view).
  proto::RunCpu total() const;

 private:
  Options o_;
  int threads_;
  int minThreads_;
  int pendingThreads_ = 0;   // a change seen in one period, made when the next agrees
  CpuTimes start_, lastPoll_, lastInterval_;
  Stopwatch sincePoll_;      // checked every step; the clocks are read once a period
};

}  // namespace wb::train
