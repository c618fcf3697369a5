#include "wb/launch/launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "wb/common/clock.h"
#include "wb/common/paths.h"
#include "wb/common/resume_rules.h"
#include "wb/common/sysinfo.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/proto/run_status.h"

namespace wb::launch {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::atomic<int> g_stopRequests{0};

std::string selfExe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "workbench-cli";
  buf[n] = '\0';
  return buf;
}

std::string tailOfFile(const fs::path& path, size_t maxBytes = 2000) {
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
  json end;                // its `end` event, when it wrote one
  json error;              // its last `error` event
};

Status spawnRank(Rank& r, const std::string& cli, const std::vector<std::string>& args,
                 const std::vector<std::string>& env, const fs::path& logPath) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0)
    return makeError(Errc::Io, std::string("cannot create a pipe for rank ") + std::to_string(r.rank) + ": " +
                                   std::strerror(errno));
  int logFd = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logFd < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return makeError(Errc::Io, "cannot open " + logPath.string() + ": " + std::strerror(errno));
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(cli.c_str()));
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    ::close(logFd);
    return makeError(Errc::Io, std::string("cannot start rank ") + std::to_string(r.rank) + ": " + std::strerror(errno));
  }
  if (pid == 0) {
    // Child: die with the launcher (no orphans even if the launcher is SIGKILLed).
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    ::setpgid(0, 0);
    ::dup2(pipefd[1], STDOUT_FILENO);
    ::dup2(logFd, STDERR_FILENO);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    for (auto& kv : env) ::putenv(const_cast<char*>(kv.c_str()));
    ::signal(SIGINT, SIG_IGN);  // the launcher forwards a Ctrl-C as SIGTERM
    ::execv(cli.c_str(), argv.data());
    std::fprintf(stderr, "cannot execute %s: %s\n", cli.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::close(pipefd[1]);
  ::close(logFd);
  r.pid = pid;
  r.outFd = pipefd[0];
  return {};
}

// What the ranks would refuse when resuming (the trainer checks the same against the checkpoint),
// found before the run folder is touched, so a refused resume leaves it as it was.
Status checkResumable(const proto::RunDir& run, const std::string& dir, const std::string& kind, const Config& config) {
  // A finished run has nothing left to train at its train.epochs.
  int64_t trained = -1;
  for (const auto& ev : proto::readEventsFile(run.events().string()))
    if (proto::stringOr(ev, "type", "") == "checkpoint" && proto::stringOr(ev, "kind", "") == kind)
      trained = proto::intOr(ev, "batch_in_epoch", 0) == 0 ? proto::intOr(ev, "epoch", -1) : -1;
  if (auto st = checkEpochsLeft(dir, trained, config.train.epochs); !st) return st;
  // Optimiser state belongs to the optimiser that wrote it.
  auto previous = proto::readJsonFile(run.config());
  const std::string wasOptim = previous.ok() && previous->is_object()
                                   ? previous->value(json::json_pointer("/optim/name"), std::string())
                                   : std::string();
  return checkSameOptimizer(dir, wasOptim, config.optim.name);
}

// A new run into a folder that already holds one would silently replace its results: refused
// unless asked for (--overwrite), and then the old run's files go first, so nothing of it mixes
// into the new one (events.jsonl is appended to).
Status prepareFreshFolder(const proto::RunDir& run, bool overwrite) {
  std::error_code ec;
  const bool finished = fs::exists(run.summary(), ec) || fs::exists(run.events(), ec);
  if (!finished) return {};
  if (!overwrite)
    return makeError(Errc::InvalidConfig, "--run-dir " + run.root.string() +
                                              ": it already holds a run (events.jsonl or summary.json); continue it "
                                              "with --resume, pass --overwrite to replace it, or choose another folder");
  std::vector<fs::path> old = {run.events(), run.summary(), run.env()};
  for (const auto& d : {run.checkpoints(), run.logs()})
    for (const auto& entry : fs::directory_iterator(d, ec)) old.push_back(entry.path());
  for (const auto& f : old)
    if (fs::remove_all(f, ec); ec)
      return makeError(Errc::Io, f.string() + ": cannot remove it to --overwrite the run: " + ec.message());
  return {};
}

}  // namespace

void requestStop() { g_stopRequests.fetch_add(1); }

json runCpuJson(double ranksCpuSeconds, double launcherWallSeconds, int askedCores, double otherCores) {
  const int cores = logicalCores();
  json c = {{"cores", cores},
            {"asked_cores", askedCores},
            {"used_cores", launcherWallSeconds > 0 ? ranksCpuSeconds / launcherWallSeconds : 0.0},
            {"other_load_cores", otherCores},
            {"contended", otherCores >= kContendedOtherCores}};
  if (otherCores >= kContendedOtherCores) {
    char note[200];
    std::snprintf(note, sizeof note,
                  "other processes used %.1f of %d cores during this run: its speed is not this machine's, and "
                  "speedups against it are not reported",
                  otherCores, cores);
    c["note"] = note;
  }
  return c;
}

Result<RunOutcome> launchRun(const Config& config, const LaunchOptions& options) {
  g_stopRequests.store(0);
  if (auto errs = validate(config); !errs.empty()) return makeError(Errc::InvalidConfig, formatFieldErrors(errs));

  // ---- the run directory
  proto::RunDir run;
  json resolved = proto::configToJson(config);
  std::string resumeCheckpoint;
  proto::RunLock lock;  // held until the run's end is written
  if (!options.resume_dir.empty()) {
    run.root = fs::absolute(options.resume_dir);
    if (!run.looksLikeRun())
      return makeError(Errc::InvalidConfig, "--resume " + options.resume_dir +
                                                ": not a run directory (no config.json or events.jsonl)");
    auto locked = proto::RunLock::acquire(run);
    if (!locked.ok()) return locked.error();
    lock = std::move(locked).value();
    if (auto st = checkResumeFrom(options.resume_from); !st) return st.error();
    const fs::path from = options.resume_from == "best" ? run.bestCheckpoint() : run.lastCheckpoint();
    if (!fs::exists(from))
      return makeError(Errc::Checkpoint, from.string() +
                                             ": no checkpoint to resume from (the run ended before its first epoch)");
    resumeCheckpoint = from.string();
    if (auto st = checkResumable(run, options.resume_dir, options.resume_from, config); !st.ok()) return st.error();
  } else if (!options.run_dir.empty()) {
    run.root = fs::absolute(options.run_dir);
  } else {
    fs::path root = options.runs_root.empty() ? defaultRunsRoot() : fs::path(options.runs_root);
    run.root = fs::absolute(root / makeRunId(config.name));
  }
  if (auto st = run.create(); !st.ok()) return st.error();
  if (options.resume_dir.empty()) {
    auto locked = proto::RunLock::acquire(run);
    if (!locked.ok()) return locked.error();
    lock = std::move(locked).value();
    if (auto st = prepareFreshFolder(run, options.overwrite); !st.ok()) return st.error();
  }
  json configChanges = json::array();
  if (!options.resume_dir.empty() && fs::exists(run.config())) {
    // Resumed with --set changes: the config it ran with stays, as config.before-resume-N.json.
    auto previous = proto::readJsonFile(run.config());
    if (previous.ok() && *previous != resolved) {
      for (const auto& op : json::diff(*previous, resolved)) {
        std::string field = op.value("path", "");
        std::replace(field.begin(), field.end(), '/', '.');
        const json before = (*previous).value(json::json_pointer(op.value("path", "")), json());
        configChanges.push_back(field.substr(1) + ": " + before.dump() + " -> " + op.value("value", json()).dump());
      }
      fs::path kept;
      for (int n = 1; kept.empty() || fs::exists(kept); ++n)
        kept = run.root / ("config.before-resume-" + std::to_string(n) + ".json");
      std::error_code ec;
      fs::rename(run.config(), kept, ec);
      if (ec) return makeError(Errc::Io, run.config().string() + ": cannot keep it as " + kept.string() + ": " + ec.message());
    }
  }
  if (options.resume_dir.empty() || !fs::exists(run.config())) {
    if (auto st = proto::writeJsonAtomic(run.config(), resolved); !st.ok()) return st.error();
  }

  proto::EventSink sink;
  if (auto st = sink.openFile(run.events().string()); !st.ok()) return st.error();
  Stopwatch clock;
  const double startUnix = unixSeconds();
  const CpuTimes cpuAtStart = readCpuTimes();
  auto emit = [&](const json& ev) {
    sink.write(ev);
    if (options.on_event) options.on_event(ev);
  };
  {
    json ev = proto::makeEvent("run", -1, 0.0);
    ev["run_dir"] = run.root.string();
    ev["run_id"] = run.id();
    ev["name"] = config.name;
    ev["world_size"] = config.speedups.devices;
    ev["config"] = resolved;
    if (!resumeCheckpoint.empty()) ev["resume"] = resumeCheckpoint;
    if (!configChanges.empty()) ev["config_changes"] = configChanges;
    emit(ev);
  }

  // ---- spawn the ranks
  const int world = config.speedups.devices;
  const std::string cli = options.cli_path.empty() ? selfExe() : options.cli_path;
  // The ranks meet through a FileStore in the run folder: nothing listens beyond loopback (a
  // TCPStore would listen on every interface). A crashed run's file would hold stale keys.
  const fs::path rendezvous = run.rendezvousFile();
  std::error_code rmEc;
  fs::remove(rendezvous, rmEc);
  std::vector<Rank> ranks(static_cast<size_t>(world));
  std::string startError;
  for (int i = 0; i < world; ++i) {
    Rank& r = ranks[static_cast<size_t>(i)];
    r.rank = i;
    std::vector<std::string> args = {"worker", "--config", run.config().string(), "--run-dir", run.root.string(),
                                     "--events-stdout", "--collective-timeout", std::to_string(options.collective_timeout_s)};
    if (!resumeCheckpoint.empty()) {
      args.push_back("--resume");
      args.push_back(resumeCheckpoint);
    }
    std::vector<std::string> env = {"WB_STORE_FILE=" + rendezvous.string(),
                                    "RANK=" + std::to_string(i), "WORLD_SIZE=" + std::to_string(world),
                                    "LOCAL_RANK=" + std::to_string(i), "LOCAL_WORLD_SIZE=" + std::to_string(world)};
    if (auto st = spawnRank(r, cli, args, env, run.rankLog(i)); !st.ok()) {
      startError = st.error().message;
      break;
    }
  }

  // ---- supervise: merge events, watch exits, tear down on the first failure
  int failedRank = -1;
  std::string failReason;
  bool tearingDown = false;
  bool cancelling = false;
  double teardownAt = 0;
  int stopSeen = 0;
  bool envWritten = false;
  auto signalAll = [&](int sig) {
    for (auto& r : ranks)
      if (r.pid > 0 && !r.exited) ::kill(r.pid, sig);
  };
  if (!startError.empty()) {
    failReason = startError;
    tearingDown = true;
    teardownAt = clock.seconds();
    signalAll(SIGTERM);
  }

  auto handleLine = [&](Rank& r, const std::string& line) {
    auto ev = proto::decodeEvent(line);
    if (!ev) return;
    if (!ev->contains("rank")) (*ev)["rank"] = r.rank;
    const std::string type = proto::stringOr(*ev, "type", "");
    if (type == "end") {
      r.end = *ev;  // the launcher writes the run's single `end`
      return;
    }
    if (type == "error") r.error = *ev;
    if (type == "start") r.threads = static_cast<int>(proto::intOr(*ev, "threads", 0));
    if (type == "start" && r.rank == 0 && !envWritten) {
      json env;
      env["host"] = ev->value("host", json::object());
      env["versions"] = ev->value("versions", json::object());
      env["device"] = ev->value("device", json(""));
      env["threads"] = ev->value("threads", json(0));
      env["world_size"] = world;
      env["run_id"] = run.id();
      (void)proto::writeJsonAtomic(run.env(), env);
      envWritten = true;
    }
    emit(*ev);
  };

  for (;;) {
    const int stops = g_stopRequests.load();
    if (stops > stopSeen) {
      stopSeen = stops;
      if (!cancelling) {
        cancelling = true;
        teardownAt = clock.seconds();
        signalAll(SIGTERM);  // ranks finish their step and end `cancelled`
      } else {
        signalAll(SIGKILL);  // asked twice: stop now
      }
    }
    if ((tearingDown || cancelling) && clock.seconds() - teardownAt > options.kill_grace_s) signalAll(SIGKILL);

    std::vector<pollfd> fds;
    std::vector<Rank*> owners;
    for (auto& r : ranks)
      if (r.outFd >= 0) {
        fds.push_back({r.outFd, POLLIN, 0});
        owners.push_back(&r);
      }
    if (!fds.empty()) {
      int n = ::poll(fds.data(), fds.size(), 100);
      if (n < 0 && errno != EINTR) break;
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Rank& r = *owners[i];
        char buf[65536];
        ssize_t got = ::read(r.outFd, buf, sizeof buf);
        if (got > 0) {
          for (auto& line : r.lines.feed(buf, static_cast<size_t>(got))) handleLine(r, line);
        } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
          if (auto tail = r.lines.finish()) handleLine(r, *tail);
          ::close(r.outFd);
          r.outFd = -1;
        }
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // ranks closed their output: reap them promptly
    }

    // Reap.
    bool allDone = true;
    for (auto& r : ranks) {
      if (r.pid <= 0 || r.exited) continue;
      int wstatus = 0;
      rusage ru{};
      pid_t w = ::wait4(r.pid, &wstatus, WNOHANG, &ru);
      if (w == r.pid) {
        r.exited = true;
        r.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
        if (WIFEXITED(wstatus)) r.exitCode = WEXITSTATUS(wstatus);
        else if (WIFSIGNALED(wstatus)) {
          r.signaled = true;
          r.signal = WTERMSIG(wstatus);
          r.exitCode = 128 + r.signal;
        }
        const bool bad = r.signaled || !proto::isOutcomeExitCode(r.exitCode);
        if (bad && failedRank < 0 && !cancelling) {
          failedRank = r.rank;
          if (r.signaled)
            failReason = "rank " + std::to_string(r.rank) + " was killed by signal " + std::to_string(r.signal) +
                         " (" + strsignal(r.signal) + ")";
          else if (!r.error.is_null())
            failReason = "rank " + std::to_string(r.rank) + ": " + proto::stringOr(r.error, "message", "failed");
          else
            failReason = "rank " + std::to_string(r.rank) + " exited with code " + std::to_string(r.exitCode);
          if (!tearingDown) {
            tearingDown = true;
            teardownAt = clock.seconds();
            signalAll(SIGTERM);
          }
        }
      } else {
        allDone = false;
      }
    }
    bool pipesOpen = false;
    for (auto& r : ranks) pipesOpen = pipesOpen || r.outFd >= 0;
    if (allDone && !pipesOpen) break;
  }

  fs::remove(rendezvous, rmEc);

  // ---- the run's single end
  RunOutcome out;
  out.run_dir = run.root.string();
  const Rank* r0 = ranks.empty() ? nullptr : &ranks[0];
  json summary = (r0 && !r0->end.is_null()) ? proto::objectOr(r0->end, "summary") : json::object();
  std::string status;
  if (failedRank >= 0 || !startError.empty()) status = proto::kStatusFailed;
  else if (r0 && !r0->end.is_null()) status = proto::stringOr(r0->end, "status", proto::kStatusFailed);
  else if (cancelling) status = proto::kStatusCancelled;
  else {
    status = proto::kStatusFailed;
    failReason = "rank 0 ended without reporting a result";
    failedRank = 0;
  }
  if (status == proto::kStatusFailed) {
    if (failReason.empty() && r0 && !r0->end.is_null())
      failReason = proto::stringOr(proto::objectOr(r0->end, "summary"), "error", "failed");
    summary["error"] = failReason;
    if (failedRank >= 0) {
      summary["failed_rank"] = failedRank;
      summary["log_tail"] = tailOfFile(run.rankLog(failedRank));
    }
  }
  summary["status"] = status;
  summary["run_id"] = run.id();
  summary["name"] = config.name;
  summary["run_dir"] = run.root.string();
  summary["launcher_wall_s"] = clock.seconds();
  summary["run_wall_s"] = options.startup_s + clock.seconds();
  if (const double first = proto::numberOr(summary, "first_step_unix", 0); first > 0)
    summary["time_to_first_step_s"] = options.startup_s + first - startUnix;
  {
    double ranksCpu = 0;
    int asked = 0;
    for (const auto& rk : ranks) ranksCpu += rk.cpu_s, asked += rk.threads;
    const CpuShare share = cpuShareBetween(cpuAtStart, readCpuTimes(), ranksCpu);
    json cpu = runCpuJson(ranksCpu, share.seconds, asked, share.other_cores);
    for (const char* key : {"threads", "min_threads"})  // rank 0's: fewer while others took cores
      if (summary.contains("cpu") && summary["cpu"].contains(key)) cpu[key] = summary["cpu"][key];
    summary["cpu"] = cpu;
  }
  if (status == proto::kStatusFailed) {
    json err = proto::makeEvent("error", failedRank, clock.seconds());
    err["message"] = failReason;
    err["code"] = "rank_failed";
    if (failedRank >= 0) err["log_tail"] = summary["log_tail"];
    emit(err);
  }
  // summary.json first: whoever sees `end` (the window, a script) can read it at once.
  const Status written = proto::writeJsonAtomic(run.summary(), summary);
  json end = proto::makeEvent("end", -1, clock.seconds());
  end["status"] = status;
  end["summary"] = summary;
  emit(end);
  if (!written.ok()) return written.error();

  int rank0Code = r0 ? r0->exitCode : 1;
  if (failedRank >= 0) rank0Code = ranks[static_cast<size_t>(failedRank)].exitCode;
  out.status = status;
  out.exit_code = proto::exitCodeForStatus(status, rank0Code);
  out.summary = summary;
  return out;
}

}  // namespace wb::launch
