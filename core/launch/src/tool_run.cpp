#include "wb/launch/tool_run.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "ranks.h"
#include "wb/common/fs.h"
#include "wb/launch/warm_start.h"

extern char** environ;

namespace wb::launch {
namespace fs = std::filesystem;

namespace {

// The last `lines` lines of a file, for an error.
std::string tailOf(const fs::path& file, int lines) {
  auto text = readFile(file);
  if (!text.ok()) return "";
  std::string s = *text;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  size_t pos = s.size();
  for (int n = 0; n < lines && pos != std::string::npos && pos > 0; ++n) pos = s.rfind('\n', pos - 1);
  return pos == std::string::npos ? s : s.substr(pos + 1);
}

// The tool forked from the warm server (warm_start.h), re-parented here (a subreaper while it
// starts) so that it is waited for as a child; nullopt when it cannot start warm.
std::optional<Result<pid_t>> spawnWarm(const ToolRun& r, const fs::path& out) {
  if (!warmServerRunning()) return std::nullopt;
  const int outFd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int logFd = ::open(r.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  detail::RankCommand cmd;
  cmd.program = r.program;
  cmd.args = r.args;
  cmd.ignoreSigint = false;  // a Ctrl-C reaches it as it reaches this process: it stops itself
  std::vector<char*> argv{const_cast<char*>(r.program.c_str())};
  for (const auto& a : r.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::optional<pid_t> pid;
  int error = 0;
  if (outFd >= 0 && logFd >= 0) {
    int wasSubreaper = 0;
    ::prctl(PR_GET_CHILD_SUBREAPER, &wasSubreaper);
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid = detail::startWarm(cmd, argv.data(), environ, outFd, logFd, error);
    ::prctl(PR_SET_CHILD_SUBREAPER, wasSubreaper);
  }
  for (int fd : {outFd, logFd})
    if (fd >= 0) ::close(fd);
  if (!pid) return std::nullopt;
  if (*pid < 0) return Result<pid_t>(makeError(Errc::Io, "cannot start " + r.what + " (" + r.program + "): " + std::strerror(error)));
  return Result<pid_t>(*pid);
}

Result<pid_t> spawn(const ToolRun& r, const fs::path& out) {
  if (auto warm = spawnWarm(r, out)) return std::move(*warm);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, r.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  std::vector<char*> argv{const_cast<char*>(r.program.c_str())};
  for (const auto& a : r.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, r.program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return makeError(Errc::Io, "cannot start " + r.what + " (" + r.program + "): " + std::strerror(rc));
  return pid;
}

// Waits for pid; a stop sends SIGTERM, and SIGKILL 10 s later. Its wait status.
int waitFor(pid_t pid, const std::atomic<bool>* stop) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point termAt{};
  bool termed = false;
  for (;;) {
    int status = 0;
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid || (got < 0 && errno != EINTR)) return status;
    if (stop && stop->load() && !termed) ::kill(pid, SIGTERM), termed = true, termAt = Clock::now();
    if (termed && Clock::now() - termAt > std::chrono::seconds(10)) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

Result<nlohmann::json> runTool(const ToolRun& r) {
  std::error_code ec;
  fs::create_directories(r.result_file.parent_path(), ec);
  const fs::path partial = r.result_file.string() + ".partial";
  auto pid = spawn(r, partial);
  if (!pid.ok()) return pid.error();
  const int status = waitFor(*pid, r.stop);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  auto text = readFile(partial);
  fs::remove(partial, ec);
  if ((r.stop && r.stop->load()) || code == 130 || code == 128 + SIGTERM)
    return makeError(Errc::Cancelled, r.what + " was stopped");
  if (code != 0) {
    const std::string why = r.what + " ended with exit status " + std::to_string(code) + " (its log: " +
                            r.log_file.string() + "):\n" + tailOf(r.log_file, 6);
    return makeError(code == 2 ? Errc::InvalidConfig : code == 3 ? Errc::Data : Errc::Internal, why);
  }
  nlohmann::json doc = text.ok() ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (doc.is_discarded() || !doc.is_object())
    return makeError(Errc::Internal, r.what + " printed no JSON document (its log: " + r.log_file.string() + ")");
  if (auto st = writeFileAtomic(r.result_file, doc.dump(2) + "\n"); !st.ok()) return st.error();
  return doc;
}

}  // namespace wb::launch
