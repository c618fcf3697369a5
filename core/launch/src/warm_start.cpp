#include "wb/launch/warm_start.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ranks.h"

extern char** environ;

namespace wb::launch {

namespace {

constexpr uint32_t kMagic = 0x57424d31;      // "WBM1"
constexpr size_t kMaxRequest = 1 << 20;      // arguments and environment of one child

struct Header {
  uint32_t magic = kMagic;
  int32_t launcher = 0;  // the process the child is re-parented to (its subreaper)
  uint8_t own_session = 0, ignore_xfsz = 0, ignore_sigint = 1;
  uint32_t argc = 0, envc = 0;
};

struct Server {
  std::mutex mu;  // one request at a time on the socket
  pid_t pid = -1;
  int sock = -1;
  WarmMain main = nullptr;
  char* title = nullptr;  // main's argv and environ strings, contiguous: where a child's cmdline goes
  size_t titleArgs = 0;   // the arguments' part of it
  size_t titleAll = 0;    // with the environment's strings that follow them
};

Server& server() {
  static Server s;
  return s;
}

int threadCount() {
  DIR* d = ::opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n;
}

// Where main's argv strings are (and the environment's right after them, as the kernel lays them).
void findTitle(Server& s, int argc, char** argv) {
  if (argc < 1 || !argv[0]) return;
  char* end = argv[0];
  for (int i = 0; i < argc && argv[i] == end; ++i) end = argv[i] + std::strlen(argv[i]) + 1;
  s.title = argv[0];
  s.titleArgs = static_cast<size_t>(end - argv[0]);
  for (char** e = environ; e && *e && *e == end; ++e) end = *e + std::strlen(*e) + 1;
  s.titleAll = static_cast<size_t>(end - argv[0]);
}

// /proc/self/cmdline as exec would have made it: the arguments NUL-separated where they fit in
// main's own, else one line (the kernel reads a line past a last byte that is not NUL).
void setTitle(const Server& s, char* const* argv) {
  if (!s.title || s.titleAll < 2) return;
  std::string joined;
  for (char* const* a = argv; *a; ++a) joined.append(*a).push_back('\0');
  if (joined.size() > s.titleArgs)
    for (size_t i = 0; i + 1 < joined.size(); ++i)
      if (joined[i] == '\0') joined[i] = ' ';
  const size_t n = std::min(joined.size(), s.titleAll - 1);
  std::memcpy(s.title, joined.data(), n);
  std::memset(s.title + n, 0, s.titleAll - n);
}

void resetSignals(bool ignoreSigint, bool ignoreXfsz) {
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  if (ignoreSigint) ::signal(SIGINT, SIG_IGN);  // a rank: the launcher forwards a Ctrl-C as SIGTERM
  ::signal(SIGXFSZ, ignoreXfsz ? SIG_IGN : SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// The rank: once re-parented to the launcher it dies with it, takes its descriptors, signals,
// environment and arguments, and runs main as an exec'd one would.
[[noreturn]] void becomeRank(const Server& s, const Header& h, std::vector<char*>& argv, std::vector<char*>& env, int outFd,
                             int logFd) {
  for (int i = 0; i < 40000 && ::getppid() != h.launcher; ++i) ::usleep(50);  // its first parent exits at once
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != h.launcher) ::_exit(1);
  if (h.own_session) ::setsid();
  ::dup2(outFd, STDOUT_FILENO);
  ::dup2(logFd, STDERR_FILENO);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  ::close_range(3, ~0U, 0);
  resetSignals(h.ignore_sigint != 0, h.ignore_xfsz != 0);
  ::clearenv();
  for (char* kv : env) ::putenv(kv);
  setTitle(s, argv.data());
  const int code = s.main(static_cast<int>(h.argc), argv.data());
  std::fflush(nullptr);
  ::_exit(code);
}

// Splits a request's strings (argc arguments, then envc variables, each NUL-terminated).
bool parseStrings(char* p, char* end, const Header& h, std::vector<char*>& argv, std::vector<char*>& env) {
  for (uint32_t i = 0; i < h.argc + h.envc; ++i) {
    char* nul = static_cast<char*>(std::memchr(p, '\0', static_cast<size_t>(end - p)));
    if (!nul) return false;
    (i < h.argc ? argv : env).push_back(p);
    p = nul + 1;
  }
  argv.push_back(nullptr);
  return h.argc > 0;
}

// One request: a first child forks the rank and exits, so the rank is re-parented to the
// launcher; the rank's pid (or the errno of a failed fork) goes back.
void serveOne(const Server& s, int sock, char* buf, size_t n, const int fds[2]) {
  int32_t reply[2] = {-1, EINVAL};
  Header h;
  h.magic = 0;
  std::vector<char*> argv, env;
  if (n >= sizeof h) std::memcpy(&h, buf, sizeof h);
  int pipefd[2] = {-1, -1};
  if (h.magic == kMagic && fds[0] >= 0 && fds[1] >= 0 && parseStrings(buf + sizeof h, buf + n, h, argv, env) &&
      ::pipe2(pipefd, O_CLOEXEC) == 0) {
    const pid_t first = ::fork();
    if (first == 0) {
      const pid_t rank = ::fork();
      if (rank == 0) becomeRank(s, h, argv, env, fds[0], fds[1]);
      const int32_t out[2] = {rank, rank < 0 ? errno : 0};
      (void)!::write(pipefd[1], out, sizeof out);
      ::_exit(0);
    }
    reply[1] = first < 0 ? errno : EIO;
    ::close(pipefd[1]);
    if (first > 0) {
      if (::read(pipefd[0], reply, sizeof reply) != static_cast<ssize_t>(sizeof reply)) reply[0] = -1;
      while (::waitpid(first, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    ::close(pipefd[0]);
  }
  for (int i = 0; i < 2; ++i)
    if (fds[i] >= 0) ::close(fds[i]);
  (void)!::send(sock, reply, sizeof reply, MSG_NOSIGNAL);
}

[[noreturn]] void serve(const Server& s, int sock, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(0);
  ::signal(SIGINT, SIG_IGN);  // a Ctrl-C is the command's to handle; the server ends with it
  const int devnull = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3 && devnull >= 0; ++fd) ::dup2(devnull, fd);  // a reader of the command's output is not held
  if (devnull > 2) ::close(devnull);
  char* buf = static_cast<char*>(std::malloc(kMaxRequest));
  if (!buf) ::_exit(1);
  for (;;) {
    alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))];
    iovec iov{buf, kMaxRequest};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(0);  // the command closed its end: it is done
    int fds[2] = {-1, -1};
    if (cmsghdr* c = CMSG_FIRSTHDR(&msg); c && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(2 * sizeof(int)))
      std::memcpy(fds, CMSG_DATA(c), sizeof fds);
    serveOne(s, sock, buf, static_cast<size_t>(n), fds);
  }
}

bool thisBinary(const std::string& program) {
  std::error_code ec;
  return std::filesystem::equivalent(program, "/proc/self/exe", ec) && !ec;
}

bool launcherIsSubreaper() {
  int on = 0;
  return ::prctl(PR_GET_CHILD_SUBREAPER, &on) == 0 && on == 1;
}

std::string requestOf(const detail::RankCommand& cmd, char* const* argv, char* const* envp) {
  Header h;
  h.launcher = ::getpid();
  h.own_session = cmd.ownSession ? 1 : 0;
  h.ignore_xfsz = cmd.ignoreXfsz ? 1 : 0;
  h.ignore_sigint = cmd.ignoreSigint ? 1 : 0;
  std::string strings;
  for (char* const* a = argv; *a; ++a, ++h.argc) strings.append(*a).push_back('\0');
  for (char* const* e = envp; *e; ++e, ++h.envc) strings.append(*e).push_back('\0');
  std::string out(reinterpret_cast<const char*>(&h), sizeof h);
  return out + strings;
}

}  // namespace

bool startWarmServer(WarmMain main, int argc, char** argv) {
  Server& s = server();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.pid > 0) return true;
  if (threadCount() != 1) return false;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return false;
  s.main = main;
  findTitle(s, argc, argv);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {  // the server: not one itself (its ranks start no warm ones), the lock freed
    ::close(sv[0]);
    s.pid = -1;
    s.mu.unlock();
    serve(s, sv[1], parent);
  }
  ::close(sv[1]);
  if (pid < 0) {
    ::close(sv[0]);
    return false;
  }
  s.pid = pid;
  s.sock = sv[0];
  return true;
}

bool warmServerRunning() {
  Server& s = server();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.pid > 0;
}

void stopWarmServer() {
  Server& s = server();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.pid <= 0) return;
  ::close(s.sock);
  while (::waitpid(s.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  s.pid = -1;
  s.sock = -1;
}

namespace detail {

std::optional<pid_t> startWarm(const RankCommand& cmd, char* const* argv, char* const* envp, int outFd, int logFd, int& error) {
  Server& s = server();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.pid <= 0 || !launcherIsSubreaper() || !thisBinary(cmd.program)) return std::nullopt;
  const std::string request = requestOf(cmd, argv, envp);
  if (request.size() > kMaxRequest) return std::nullopt;
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  iovec iov{const_cast<char*>(request.data()), request.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(2 * sizeof(int));
  const int fds[2] = {outFd, logFd};
  std::memcpy(CMSG_DATA(c), fds, sizeof fds);
  ssize_t sent;
  while ((sent = ::sendmsg(s.sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  int32_t reply[2] = {-1, 0};
  ssize_t got = -1;
  if (sent == static_cast<ssize_t>(request.size()))
    while ((got = ::recv(s.sock, reply, sizeof reply, 0)) < 0 && errno == EINTR) {
    }
  if (got != static_cast<ssize_t>(sizeof reply)) {  // the server is gone: this one and the next start cold
    ::close(s.sock);
    ::waitpid(s.pid, nullptr, WNOHANG);
    s.pid = -1, s.sock = -1;
    return std::nullopt;
  }
  error = reply[1];
  return static_cast<pid_t>(reply[0]);
}

}  // namespace detail

}  // namespace wb::launch
