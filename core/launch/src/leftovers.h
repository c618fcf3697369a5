#pragma once
// What a run leaves behind: processes its command or its ranks started and did not wait for
// (DataLoader workers, a logger's process, a helper it forgot). Left running they take the CPU
// from the next runs and spoil their timing, so every run's end ends them, however it ended.
//
// While a Leftovers lives this process is a child subreaper (PR_SET_CHILD_SUBREAPER): a
// descendant whose parent exits is re-parented here instead of to init, so one that
// double-forked or left the command's session (setsid) can still be found and ended. One
// launch at a time per process, as the CLI runs them: a child re-parented here during a
// concurrent launch would be taken for this one's. Internal to core/launch.
#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

namespace wb::launch::detail {

struct LeftProcess {
  pid_t pid = 0;
  std::string command;   // /proc/PID/cmdline, its arguments joined by spaces
  bool escaped = false;  // it had left the session end() was asked to end
};

class Leftovers {
 public:
  Leftovers();   // subreaper on; the children this process has already are not the run's
  ~Leftovers();  // subreaper as it was
  Leftovers(const Leftovers&) = delete;
  Leftovers& operator=(const Leftovers&) = delete;

  // Ends what is left: every process of `session` (0: none), every child re-parented here since
  // construction (a rank spawnRank started and reapRank has not reaped is not one), and all their
  // descendants. Each gets SIGTERM (and SIGCONT: a stopped one acts on it), has up to grace_s to
  // go, then SIGKILL until it is gone; the ones re-parented here are reaped. Returns them as
  // first found; when nothing is left it returns at once (no wait; without a child of this
  // process, not even a look at /proc).
  std::vector<LeftProcess> end(pid_t session, double grace_s);

 private:
  std::vector<pid_t> lookForThem(pid_t session, std::vector<LeftProcess>& found) const;

  std::set<pid_t> before_;
  int wasSubreaper_ = 0;
};

// The warning for one that outlived `who` ("the command", "the ranks"): its pid and command,
// and that it was ended.
std::string leftoverWarning(const LeftProcess& p, const std::string& who);

}  // namespace wb::launch::detail
