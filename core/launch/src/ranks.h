#pragma once
// The launcher's rank processes: how one is started (fork + exec of `workbench-cli worker`
// with its stdout a pipe to the launcher and its stderr its log), reaped and described.
// Internal to core/launch.
#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"

namespace wb::launch::detail {

struct Rank {
  int rank = 0;
  pid_t pid = -1;
  int outFd = -1;          // the rank's stdout: its event stream
  proto::LineBuffer lines;
  bool exited = false;
  int exitCode = 0;        // exit status, or 128 + signal
  bool signaled = false;
  int signal = 0;
  double cpu_s = 0;        // CPU seconds of the rank and all its threads (from wait4)
  int threads = 0;         // intra-op threads its start event asked for
  bool warm = false;       // forked from the warm server (wb/launch/warm_start.h), not exec'd
  double lastEventAt = 0;  // the launcher's clock when its last event arrived (0: none yet)
  std::optional<proto::EndEvent> end;      // its `end` event, when it wrote one
  std::optional<proto::ErrorEvent> error;  // its last `error` event
};

struct RankCommand {
  std::string program;            // the workbench-cli binary
  std::vector<std::string> args;  // after the program
  std::vector<std::string> env;   // KEY=VALUE added to the launcher's environment
  std::filesystem::path log;      // the rank's stderr, appended to
  bool ignoreXfsz = false;        // SIGXFSZ as the user had it before the launcher ignored it
  // Its own session and process group: what a shell starts gets its signals (signalGroup), and
  // can be found by it when the shell has gone (leftovers.h).
  bool ownSession = false;
  bool ignoreSigint = true;       // a rank: the launcher forwards a Ctrl-C as SIGTERM
};

// Starts r as cmd (warm, forked from the warm server, when it can: warm_start.h). The rank stays in the launcher's process group (a kill of the group
// reaches it) unless cmd asks for a session of its own (made before it runs), and is SIGKILLed if the thread that started it dies (PR_SET_PDEATHSIG: call it
// from the thread that supervises the rank to its end). Between fork and exec only
// async-signal-safe calls run; a failed exec writes "cannot execute PROGRAM: REASON" to the
// rank's log and exits 127. Io error (naming the rank) when no process could be started.
Status spawnRank(Rank& r, const RankCommand& cmd);

// A start of cmd from the warm server (wb/launch/warm_start.h) with the given descriptors: the
// rank's pid (-1 with `error` set when the server could not fork), or nullopt when it cannot be
// started warm (no server, not this binary, the launcher not a subreaper): then start it cold.
std::optional<pid_t> startWarm(const RankCommand& cmd, char* const* argv, char* const* envp, int outFd, int logFd,
                               int& error);

// Whether pid is a rank spawnRank started that reapRank has not reaped yet (any thread's).
bool isUnreapedRank(pid_t pid);

// Non-blocking: true when r exited now (its exit code, signal and CPU time filled in).
bool reapRank(Rank& r);

// Exited otherwise than ok (0), cancelled (130) or diverged (4).
bool rankFailed(const Rank& r);

// Why a failed rank failed, in words naming it.
std::string rankFailure(const Rank& r);

// Why a rank that has not exited no longer takes part: "stopped" (SIGSTOP, job control) or
// "held by a debugger or tracer" (ptrace-stopped), from its state in /proc/<pid>/stat; empty when
// it runs (or sleeps) as a rank should, or its state cannot be read.
std::string stallOf(const Rank& r);

// Sends sig to r's process group (a spawn with ownSession), when r has not exited.
void signalGroup(Rank& r, int sig);

// requestStop()'s count: the launch in progress compares it with what it saw last.
std::atomic<int>& stopRequests();

// The last maxBytes of a file, from a line's start ("" when it cannot be read).
std::string tailOfFile(const std::filesystem::path& path, size_t maxBytes = 2000);

// Sends sig to every rank still running.
void signalRanks(std::vector<Rank>& ranks, int sig);

}  // namespace wb::launch::detail
