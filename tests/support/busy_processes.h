#pragma once
// Busy processes for the tests of the contention check: one this process started (a run of its own
// experiment, side by side) and one of no experiment of ours. Each has burnt a fixed amount of CPU
// when its function returns (no wall-clock assumption) and spins on until endProcess.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace wb::test {

// This process's own CPU seconds (every thread).
inline double ownCpuSeconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// In a forked child: burn `seconds` of CPU, say so on `done`, then spin on until killed (or exit
// at once when `thenExit`).
[[noreturn]] inline void burnThen(int done, double seconds, bool thenExit) {
  const double start = ownCpuSeconds();
  while (ownCpuSeconds() - start < seconds) {
  }
  const char byte = 1;
  (void)!::write(done, &byte, 1);
  if (thenExit) ::_exit(0);
  for (volatile unsigned long spins = 0;; spins = spins + 1) {
  }
}

// A busy process this one started (a run of its own experiment): its pid; it has burnt 0.3 s of
// CPU when this returns and spins on.
inline pid_t ownBusyChild(bool thenExit = false) {
  int done[2];
  if (::pipe(done) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) burnThen(done[1], 0.3, thenExit);
  char byte = 0;
  (void)!::read(done[0], &byte, 1);
  ::close(done[0]), ::close(done[1]);
  return pid;
}

// A busy process of no experiment of ours: started through a middle process that exits at once,
// so it is re-parented away from this one (not a child subreaper) to init or a subreaper above us.
// Its pid; it has burnt 0.3 s of CPU when this returns and spins on.
inline pid_t unrelatedBusyProcess() {
  int done[2], told[2];
  if (::pipe(done) != 0 || ::pipe(told) != 0) return -1;
  const pid_t middle = ::fork();
  if (middle == 0) {
    ::setsid();
    const pid_t busy = ::fork();
    if (busy == 0) burnThen(done[1], 0.3, false);
    (void)!::write(told[1], &busy, sizeof busy);
    ::_exit(0);
  }
  pid_t busy = -1;
  (void)!::read(told[0], &busy, sizeof busy);
  int status = 0;
  ::waitpid(middle, &status, 0);
  char byte = 0;
  (void)!::read(done[0], &byte, 1);
  for (int fd : {done[0], done[1], told[0], told[1]}) ::close(fd);
  return busy;
}

inline void endProcess(pid_t pid, bool ours) {
  ::kill(pid, SIGKILL);
  int status = 0;
  if (ours) ::waitpid(pid, &status, 0);
}

}  // namespace wb::test
