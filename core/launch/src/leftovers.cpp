#include "leftovers.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <thread>

#include "ranks.h"
#include "wb/common/clock.h"
#include "wb/common/processes.h"

namespace wb::launch::detail {

namespace {

// After SIGKILL a process in uninterruptible sleep may take a moment; this long, then it is
// left to the kernel (it is already reported).
constexpr double kKillWaitS = 5;

std::string commandOf(const ProcessStat& p) {
  std::string cmd = readProcessFile(p.pid, "cmdline");  // "" once it is gone
  while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  for (char& c : cmd)
    if (c == '\0') c = ' ';
  return cmd.empty() ? "[" + p.comm + "]" : cmd;
}

// Whether this process (any of its threads) has a child, exited or not. Without one nothing of a
// run can be left: whatever the run started descends from a child of ours (re-parented here,
// the subreaper, when its parent went), so /proc is not read at all.
bool hasChildren() {
  siginfo_t info{};
  return !(::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD);
}

std::set<pid_t> childrenOfSelf() {
  if (!hasChildren()) return {};
  std::set<pid_t> out;
  const pid_t self = ::getpid();
  for (const ProcessStat& p : allProcesses())
    if (p.ppid == self) out.insert(p.pid);
  return out;
}

}  // namespace

Leftovers::Leftovers() : before_(childrenOfSelf()) {
  ::prctl(PR_GET_CHILD_SUBREAPER, &wasSubreaper_);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

Leftovers::~Leftovers() { ::prctl(PR_SET_CHILD_SUBREAPER, wasSubreaper_); }

// The run's processes still alive: the session's, the children re-parented here, and their
// descendants. Zombies re-parented here are reaped on the way; newly seen ones join `found`.
std::vector<pid_t> Leftovers::lookForThem(pid_t session, std::vector<LeftProcess>& found) const {
  const pid_t self = ::getpid();
  std::multimap<pid_t, const ProcessStat*> childrenOf;
  std::vector<const ProcessStat*> todo;
  const std::vector<ProcessStat> all = allProcesses();
  for (const ProcessStat& p : all) {
    const bool reparented = p.ppid == self && !before_.count(p.pid) && !isUnreapedRank(p.pid);
    if (reparented && p.dead()) ::waitpid(p.pid, nullptr, WNOHANG);
    if (p.dead() || p.pid == self) continue;
    childrenOf.emplace(p.ppid, &p);
    if (reparented || (session > 0 && p.sid == session)) todo.push_back(&p);
  }
  std::set<pid_t> alive;
  while (!todo.empty()) {
    const ProcessStat* p = todo.back();
    todo.pop_back();
    if (!alive.insert(p->pid).second) continue;
    bool known = false;
    for (const LeftProcess& f : found) known = known || f.pid == p->pid;
    if (!known) found.push_back({p->pid, commandOf(*p), session > 0 && p->sid != session});
    for (auto [it, end] = childrenOf.equal_range(p->pid); it != end; ++it) todo.push_back(it->second);
  }
  return {alive.begin(), alive.end()};
}

std::vector<LeftProcess> Leftovers::end(pid_t session, double grace_s) {
  std::vector<LeftProcess> found;
  std::set<pid_t> asked;
  const Stopwatch clock;
  while (hasChildren()) {
    const std::vector<pid_t> alive = lookForThem(session, found);
    if (alive.empty() || clock.seconds() > grace_s + kKillWaitS) break;
    const bool kill = clock.seconds() >= grace_s;
    for (const pid_t pid : alive) {
      if (asked.insert(pid).second) {
        ::kill(pid, SIGTERM);
        ::kill(pid, SIGCONT);
      }
      if (kill) ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return found;
}

std::string leftoverWarning(const LeftProcess& p, const std::string& who) {
  return "a process " + who + " started outlived it" + (p.escaped ? " and left its session" : "") + ": pid " +
         std::to_string(p.pid) + " `" + p.command +
         "`; ended (left running it would take the CPU from the next runs and spoil their timing)";
}

}  // namespace wb::launch::detail
