#include "ranks.h"

#include "wb/common/format.h"
#include "wb/common/processes.h"
#include "wb/proto/run_status.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>

extern char** environ;

namespace wb::launch::detail {

namespace {

// The child's side of the fork: async-signal-safe calls only (no allocation, no stdio).
[[noreturn]] void execRank(const RankCommand& cmd, char* const* argv, char* const* envp, int outFd, int logFd,
                           pid_t parent, const std::string& execFailed) {
  // Die with the launcher (no orphans even if it is SIGKILLed: a rank nobody reads has nothing
  // left to report to).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  if (cmd.ownSession) ::setsid();
  ::dup2(outFd, STDOUT_FILENO);
  ::dup2(logFd, STDERR_FILENO);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  if (cmd.ignoreSigint) ::signal(SIGINT, SIG_IGN);  // the launcher forwards a Ctrl-C as SIGTERM
  ::signal(SIGXFSZ, cmd.ignoreXfsz ? SIG_IGN : SIG_DFL);
  ::execve(cmd.program.c_str(), argv, envp);
  (void)!::write(STDERR_FILENO, execFailed.data(), execFailed.size());
  const char* why = ::strerror(errno);  // glibc: a static table, nothing allocated for a known errno
  (void)!::write(STDERR_FILENO, why, std::strlen(why));
  (void)!::write(STDERR_FILENO, "\n", 1);
  ::_exit(127);
}

// The launcher's environment with cmd.env's variables set (replacing any of the same name).
std::vector<std::string> rankEnvironment(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('=') + 1);
    bool replaced = false;
    for (const auto& o : overrides) replaced = replaced || o.compare(0, key.size(), key) == 0;
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

std::mutex& spawnedMutex() {
  static std::mutex mu;
  return mu;
}

std::set<pid_t>& spawned() {
  static std::set<pid_t> pids;
  return pids;
}

// The child makes its session first thing; until then a signal to its group would find none.
// Bounded: a child that exits before (its parent gone) never makes one.
void awaitSession(pid_t pid) {
  for (int i = 0; i < 20000 && ::getsid(pid) != pid; ++i) ::usleep(50);
}

}  // namespace

bool isUnreapedRank(pid_t pid) {
  std::lock_guard<std::mutex> lock(spawnedMutex());
  return spawned().count(pid) > 0;
}

Status spawnRank(Rank& r, const RankCommand& cmd) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0)
    return makeError(Errc::Io, "cannot create a pipe for rank " + std::to_string(r.rank) + ": " + std::strerror(errno));
  int logFd = ::open(cmd.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logFd < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return makeError(Errc::Io, "cannot open " + cmd.log.string() + ": " + std::strerror(errno));
  }
  // Everything the child needs is made before the fork.
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(cmd.program.c_str()));
  for (auto& a : cmd.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::vector<std::string> env = rankEnvironment(cmd.env);
  std::vector<char*> envp;
  for (auto& kv : env) envp.push_back(const_cast<char*>(kv.c_str()));
  envp.push_back(nullptr);
  const std::string execFailed = "cannot execute " + cmd.program + ": ";
  const pid_t parent = ::getpid();
  std::unique_lock<std::mutex> lock(spawnedMutex());  // a look for leftovers never takes it for one
  int forkErr = 0;
  pid_t pid = -1;
  if (const auto warm = startWarm(cmd, argv.data(), envp.data(), pipefd[1], logFd, forkErr)) {
    pid = *warm;
    r.warm = true;
  } else {
    pid = ::fork();
    if (pid == 0) execRank(cmd, argv.data(), envp.data(), pipefd[1], logFd, parent, execFailed);
    forkErr = errno;
  }
  if (pid > 0) spawned().insert(pid);
  lock.unlock();
  if (pid > 0 && cmd.ownSession) awaitSession(pid);  // a signal to its group cannot come first
  ::close(pipefd[1]);
  ::close(logFd);
  if (pid < 0) {
    ::close(pipefd[0]);
    return makeError(Errc::Io, "cannot start rank " + std::to_string(r.rank) + ": " + std::strerror(forkErr));
  }
  r.pid = pid;
  r.outFd = pipefd[0];
  return {};
}

void signalGroup(Rank& r, int sig) {
  if (r.pid > 0 && !r.exited) ::kill(-r.pid, sig);
}

std::atomic<int>& stopRequests() {
  static std::atomic<int> requests{0};
  return requests;
}

std::string tailOfFile(const std::filesystem::path& path, size_t maxBytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(in.tellg());
  const size_t from = size > maxBytes ? size - maxBytes : 0;
  in.seekg(static_cast<std::streamoff>(from));
  std::string s(size - from, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  if (from > 0) {
    auto nl = s.find('\n');
    if (nl != std::string::npos) s = s.substr(nl + 1);
  }
  return s;
}

bool reapRank(Rank& r) {
  if (r.pid <= 0 || r.exited) return false;
  int wstatus = 0;
  rusage ru{};
  if (::wait4(r.pid, &wstatus, WNOHANG, &ru) != r.pid) return false;
  r.exited = true;
  {
    std::lock_guard<std::mutex> lock(spawnedMutex());
    spawned().erase(r.pid);
  }
  r.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  if (WIFEXITED(wstatus)) {
    r.exitCode = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    r.signaled = true;
    r.signal = WTERMSIG(wstatus);
    r.exitCode = 128 + r.signal;
  }
  return true;
}

bool rankFailed(const Rank& r) { return r.signaled || !proto::isOutcomeExitCode(r.exitCode); }

std::string rankFailure(const Rank& r) {
  const std::string who = "rank " + std::to_string(r.rank);
  if (r.signaled) return who + " was killed by signal " + std::to_string(r.signal) + " (" + strsignal(r.signal) + ")";
  if (r.error) return prefixedByRank(r.rank, r.error->message.empty() ? std::string("failed") : r.error->message);
  return who + " exited with code " + std::to_string(r.exitCode);
}

std::string stallOf(const Rank& r) {
  ProcessStat stat;
  if (r.pid <= 0 || r.exited || !readProcessStat(r.pid, stat)) return "";
  switch (stat.state) {
    case 'T': return "stopped";
    case 't': return "held by a debugger or tracer";
    default: return "";
  }
}

void signalRanks(std::vector<Rank>& ranks, int sig) {
  for (auto& r : ranks)
    if (r.pid > 0 && !r.exited) ::kill(r.pid, sig);
}

}  // namespace wb::launch::detail
