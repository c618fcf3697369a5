#include "wb/train/host_use.h"

#include <malloc.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include <torch/torch.h>

namespace wb::train {
using nlohmann::json;

std::string keepFreedMemory() {
  // Setting any threshold also turns off glibc's dynamic mmap threshold. No mmap'd blocks: large
  // tensors come from the heap and return to it; no trimming: the heap keeps its pages.
  const bool ok = ::mallopt(M_MMAP_MAX, 0) == 1 && ::mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1 &&
                  ::mallopt(M_TOP_PAD, 16 << 20) == 1;
  return ok ? "freed memory stays in the process (malloc: no mmap'd blocks, no trimming)"
            : "malloc thresholds could not be set: freed memory may be returned to the kernel and faulted in again";
}

CpuMonitor::CpuMonitor(Options o) : o_(o), threads_(std::max(1, o.threads)), minThreads_(threads_) {
  start_ = lastPoll_ = lastInterval_ = readCpuTimes();
}

std::optional<std::string> CpuMonitor::poll() {
  if (!o_.adapt || sincePoll_.seconds() < o_.period_s) return std::nullopt;
  sincePoll_.reset();
  const CpuTimes now = readCpuTimes();
  const CpuShare share = cpuShareBetween(lastPoll_, now);
  lastPoll_ = now;
  // The cores left by everything else, rounded generously: a desktop's background (0.3 core)
  // keeps both threads, a busy loop (a whole core) takes one away.
  const double freeCores = static_cast<double>(o_.cores) - share.other_cores;
  const int fit = std::clamp(static_cast<int>(std::floor(freeCores + 0.4)), 1, std::max(1, o_.threads));
  if (fit == threads_) {
    pendingThreads_ = 0;
    return std::nullopt;
  }
  if (pendingThreads_ != fit) {  // two periods in a row must agree: no flapping on one spike
    pendingThreads_ = fit;
    return std::nullopt;
  }
  const int was = threads_;
  threads_ = fit;
  pendingThreads_ = 0;
  minThreads_ = std::min(minThreads_, threads_);
  at::set_num_threads(threads_);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "other processes are using %.1f of %d cores: intra-op threads %d -> %d (this run is measured under "
                "contention; its speed is not this machine's)",
                share.other_cores, o_.cores, was, threads_);
  return std::string(buf);
}

proto::CpuPart CpuMonitor::interval() {
  const CpuTimes now = readCpuTimes();
  const CpuShare s = cpuShareBetween(lastInterval_, now);
  lastInterval_ = now;
  return proto::CpuPart{s.process_cores, s.process_cores + s.other_cores, s.other_cores, o_.cores, threads_};
}

proto::RunCpu CpuMonitor::total() const {
  const CpuShare s = cpuShareBetween(start_, readCpuTimes());
  proto::RunCpu c;
  c.process_cores = s.process_cores;
  c.machine_busy_cores = s.process_cores + s.other_cores;
  c.other_cores = s.other_cores;
  c.cores = o_.cores;
  c.threads = threads_;
  c.min_threads = minThreads_;
  c.asked_cores = o_.threads;
  if (o_.local_world <= 1) c.contended = isContended(s.other_cores);
  return c;
}

}  // namespace wb::train
