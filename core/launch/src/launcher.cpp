#include "wb/launch/launcher.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <thread>

#include "leftovers.h"
#include "ranks.h"
#include "run_folder.h"
#include "wb/common/clock.h"
#include "wb/common/processes.h"
#include "wb/common/sysinfo.h"
#include "wb/launch/run_end.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/proto/run_status.h"

namespace wb::launch {
using nlohmann::json;
namespace fs = std::filesystem;
using detail::PreparedRun;
using detail::Rank;

namespace {

constexpr double kDrainS = 5;  // the ranks' last output, after they exited: at most this long

// A file size limit must be an error the run reports (EFBIG on events.jsonl), not a signal that
// kills the launcher unseen: SIGXFSZ is ignored while a run is launched, and given back after
// (the ranks get the disposition the user had).
class IgnoreXfsz {
 public:
  IgnoreXfsz() {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    ::sigaction(SIGXFSZ, &ign, &previous_);
  }
  ~IgnoreXfsz() { ::sigaction(SIGXFSZ, &previous_, nullptr); }
  IgnoreXfsz(const IgnoreXfsz&) = delete;
  IgnoreXfsz& operator=(const IgnoreXfsz&) = delete;
  bool userIgnored() const { return previous_.sa_handler == SIG_IGN; }

 private:
  struct sigaction previous_ {};
};

std::string selfExe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "workbench-cli";
  buf[n] = '\0';
  return buf;
}

// One launch, from the prepared run folder to the run's single `end`: open the events file,
// write `run`, spawn the ranks, supervise them (merge their events, forward a stop, tear all
// down when one fails), then decide the end, write summary.json and `end`. On the thread that
// called launchRun throughout (the ranks die with it: PR_SET_PDEATHSIG).
class Launch {
 public:
  Launch(const Config& config, const LaunchOptions& options, PreparedRun& prepared, bool userIgnoresXfsz)
      : config_(config), options_(options), p_(prepared), userIgnoresXfsz_(userIgnoresXfsz) {}

  Result<RunOutcome> run() {
    if (auto st = sink_.openFile(p_.run.events().string()); !st.ok()) return st.error();
    emitRunEvent();
    if (const std::string note = oversubscription(); !note.empty())
      emit(proto::toEvent(proto::WarningEvent{note, std::nullopt}, -1, clock_.seconds()));
    spawnRanks();
    supervise();
    drainOutputs(false);
    reapEveryRank();
    endLeftovers();
    drainOutputs(true);
    std::error_code ec;
    fs::remove(p_.run.rendezvousFile(), ec);
    return finish();
  }

 private:
  void emit(const json& ev);
  void emitRunEvent();
  void spawnRanks();
  void beginTeardown(int sig);
  void supervise();
  void drainOutputs(bool toTheEnd);
  void reapEveryRank();
  void endLeftovers();
  void forwardStops();
  bool pollOutputs();
  void handleLine(Rank& r, const std::string& line);
  void writeEnvJson(const proto::StartEvent& start, bool r0Warm);
  bool reapRanks();
  void blameStalledRank(const Rank& failed);
  RunEnding decideEnd() const;
  proto::RunSummary launcherSummary(const RunEnding& end) const;
  proto::RunCpu cpuSummary(const proto::RunSummary& rank0Summary) const;
  std::string oversubscription() const;
  Result<RunOutcome> finish();

  const Config& config_;
  const LaunchOptions& options_;
  PreparedRun& p_;
  const bool userIgnoresXfsz_;
  proto::EventSink sink_;
  Stopwatch clock_;
  const double startUnix_ = unixSeconds();
  const CpuTimes cpuAtStart_ = readCpuTimes();
  const std::vector<ProcessStat> processesAtStart_ = allProcesses();
  const int experiment_ = experimentRoot();  // its runs beside this one share the cores, they are no other load
  const double experimentCpuAtStart_ = familyCpuSeconds(experiment_, processesAtStart_);
  std::vector<Rank> ranks_;
  std::string startError_;
  int failedRank_ = -1;
  std::string failReason_;
  bool stalledRank_ = false;  // failedRank_ stalled (stopped) rather than died
  bool tearingDown_ = false;
  bool cancelling_ = false;
  double teardownAt_ = 0;
  int stopSeen_ = 0;
  bool envWritten_ = false;
  bool eventsFileWarned_ = false;
  bool readLastPoll_ = false;  // the last pollOutputs read something (or an end of a pipe)
  detail::Leftovers leftovers_;  // before the first rank: what the ranks leave is re-parented here
};

void Launch::emit(const json& ev) {
  sink_.write(ev);
  if (options_.on_event) options_.on_event(ev);
  if (eventsFileWarned_ || sink_.fileReport().failed_writes == 0) return;
  eventsFileWarned_ = true;  // said once, at once: the window shows it while the run goes on
  const json warn = proto::toEvent(
      proto::WarningEvent{sink_.filePath() + " cannot be written (" + sink_.fileReport().error +
                              "): its records are held back and written, in order, once it takes them again",
                          sink_.filePath()},
      -1, clock_.seconds());
  sink_.write(warn);
  if (options_.on_event) options_.on_event(warn);
}

void Launch::emitRunEvent() {
  proto::RunEvent ev;
  ev.run_dir = p_.run.root.string();
  ev.run_id = p_.run.id();
  ev.name = config_.name;
  ev.world_size = config_.speedups.devices;
  ev.config = p_.resolved;
  if (!p_.resumeCheckpoint.empty()) ev.resume = p_.resumeCheckpoint;
  if (!p_.configChanges.empty()) ev.config_changes = p_.configChanges;
  if (!p_.fineTunedFrom.empty()) ev.fine_tuned_from = p_.fineTunedFrom;
  emit(proto::toEvent(ev, -1, 0.0));
}

// One `workbench-cli worker` per rank. The ranks meet through a FileStore in the run folder:
// nothing listens beyond loopback (a TCPStore would listen on every interface). A crashed
// run's file would hold stale keys, so it goes first.
void Launch::spawnRanks() {
  const int world = config_.speedups.devices;
  std::error_code ec;
  fs::remove(p_.run.rendezvousFile(), ec);
  detail::RankCommand cmd;
  cmd.program = options_.cli_path.empty() ? selfExe() : options_.cli_path;
  cmd.ignoreXfsz = userIgnoresXfsz_;
  ranks_.resize(static_cast<size_t>(world));
  for (int i = 0; i < world; ++i) {
    Rank& r = ranks_[static_cast<size_t>(i)];
    r.rank = i;
    cmd.args = {"worker", "--config", p_.run.config().string(), "--run-dir", p_.run.root.string(),
                "--events-stdout", "--collective-timeout", std::to_string(options_.collective_timeout_s)};
    if (!p_.resumeCheckpoint.empty()) {
      cmd.args.push_back("--resume");
      cmd.args.push_back(p_.resumeCheckpoint);
    }
    cmd.env = {"WB_STORE_FILE=" + p_.run.rendezvousFile().string(), "RANK=" + std::to_string(i),
               "WORLD_SIZE=" + std::to_string(world), "LOCAL_RANK=" + std::to_string(i),
               "LOCAL_WORLD_SIZE=" + std::to_string(world)};
    cmd.log = p_.run.rankLog(i);
    if (auto st = detail::spawnRank(r, cmd); !st.ok()) {
      startError_ = st.error().message;
      failReason_ = startError_;
      beginTeardown(SIGTERM);
      return;
    }
  }
}

void Launch::beginTeardown(int sig) {
  tearingDown_ = true;
  teardownAt_ = clock_.seconds();
  detail::signalRanks(ranks_, sig);
}

// Until every rank has exited (drainOutputs reads what they wrote last): merge events, watch
// exits, tear down on the first failure, SIGKILL what is left kill_grace_s after a teardown or stop began.
void Launch::supervise() {
  for (;;) {
    forwardStops();
    if ((tearingDown_ || cancelling_) && clock_.seconds() - teardownAt_ > options_.kill_grace_s)
      detail::signalRanks(ranks_, SIGKILL);
    if (!pollOutputs()) break;
    if (reapRanks()) break;
  }
}

// What the ranks wrote last: read until every pipe is closed, or (a process a rank started may
// hold one open) until nothing came for a poll's wait; `toTheEnd`: until closed, the rest cut off.
void Launch::drainOutputs(bool toTheEnd) {
  const Stopwatch clock;
  for (;;) {
    bool open = false;
    for (const auto& r : ranks_) open = open || r.outFd >= 0;
    if (!open || clock.seconds() > kDrainS || !pollOutputs() || (!toTheEnd && !readLastPoll_)) break;
  }
  if (!toTheEnd) return;
  for (auto& r : ranks_) {
    if (r.outFd < 0) continue;
    ::close(r.outFd);
    r.outFd = -1;
  }
}

// Every rank reaped before the run ends: supervision that broke off (a poll error) kills the rest.
void Launch::reapEveryRank() {
  for (auto& r : ranks_) {
    if (r.pid <= 0 || r.exited) continue;
    ::kill(r.pid, SIGKILL);
    for (int i = 0; i < 2000 && !detail::reapRank(r); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// A rank's own processes (none of the workbench's start any) outlive it only when something in it
// forked and forgot them: ended, and said, before the run's end.
void Launch::endLeftovers() {
  for (const auto& p : leftovers_.end(0, options_.kill_grace_s))
    emit(proto::toEvent(proto::WarningEvent{detail::leftoverWarning(p, "a rank"), std::nullopt}, -1, clock_.seconds()));
}

// requestStop(): the first asks the ranks to finish their step and end `cancelled` (SIGTERM),
// a second kills them.
void Launch::forwardStops() {
  const int stops = detail::stopRequests().load();
  if (stops <= stopSeen_) return;
  stopSeen_ = stops;
  if (cancelling_) {
    detail::signalRanks(ranks_, SIGKILL);
    return;
  }
  cancelling_ = true;
  teardownAt_ = clock_.seconds();
  detail::signalRanks(ranks_, SIGTERM);
}

// Reads what the ranks wrote (up to 100 ms). False on a poll error (supervision cannot go on).
bool Launch::pollOutputs() {
  std::vector<pollfd> fds;
  std::vector<Rank*> owners;
  for (auto& r : ranks_)
    if (r.outFd >= 0) {
      fds.push_back({r.outFd, POLLIN, 0});
      owners.push_back(&r);
    }
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // ranks closed their output: reap them promptly
    return true;
  }
  const int n = ::poll(fds.data(), fds.size(), 100);
  readLastPoll_ = n > 0;
  if (n < 0 && errno != EINTR) return false;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    Rank& r = *owners[i];
    char buf[65536];
    const ssize_t got = ::read(r.outFd, buf, sizeof buf);
    if (got > 0) {
      for (auto& line : r.lines.feed(buf, static_cast<size_t>(got))) handleLine(r, line);
    } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
      if (auto tail = r.lines.finish()) handleLine(r, *tail);
      ::close(r.outFd);
      r.outFd = -1;
    }
  }
  return true;
}

// One line of a rank's stream: merged as it comes (the launcher writes the run's single `end`).
void Launch::handleLine(Rank& r, const std::string& line) {
  auto ev = proto::decodeEvent(line);
  if (!ev) return;
  if (!proto::readEnvelope(*ev).rank) (*ev)["rank"] = r.rank;
  r.lastEventAt = clock_.seconds();
  if (proto::isEvent<proto::EndEvent>(*ev)) {
    r.end = proto::readEndEvent(*ev);
    return;
  }
  if (proto::isEvent<proto::ErrorEvent>(*ev)) r.error = proto::readErrorEvent(*ev);
  if (proto::isEvent<proto::StartEvent>(*ev)) {
    const proto::StartEvent start = proto::readStartEvent(*ev);
    r.threads = start.threads;
    if (r.rank == 0 && !envWritten_) writeEnvJson(start, r.warm);
  }
  emit(*ev);
}

void Launch::writeEnvJson(const proto::StartEvent& start, bool r0Warm) {
  json env;
  proto::writeFields(start.host, env["host"] = json::object());
  env["versions"] = start.versions.is_null() ? json::object() : start.versions;
  env["device"] = start.device;
  env["threads"] = start.threads;
  env["world_size"] = config_.speedups.devices;
  env["run_id"] = p_.run.id();
  // How rank 0's process started: "warm" (forked from the command's warm server) or "cold" (exec'd).
  env["rank_start"] = r0Warm ? "warm" : "cold";
  // Each rank's process id, by rank: a rank started warm runs under the command's own name (it was
  // forked, not exec'd as `workbench-cli worker`), so this is where to find it (to profile, to stop).
  json pids = json::array();
  for (const auto& rk : ranks_) pids.push_back(int(rk.pid));
  env["rank_pids"] = pids;
  (void)proto::writeJsonAtomic(p_.run.env(), env);
  envWritten_ = true;
}

// Reaps what exited; the first rank to fail (unless the run is being cancelled) tears the
// others down. True when every rank has exited.
bool Launch::reapRanks() {
  bool allExited = true;
  for (auto& r : ranks_) {
    if (r.pid <= 0 || r.exited) continue;
    if (!detail::reapRank(r)) {
      allExited = false;
      continue;
    }
    if (!detail::rankFailed(r) || failedRank_ >= 0 || cancelling_) continue;
    failedRank_ = r.rank;
    failReason_ = detail::rankFailure(r);
    blameStalledRank(r);
    if (!tearingDown_) beginTeardown(SIGTERM);
  }
  return allExited;
}

// A rank that fails while a peer is stopped (SIGSTOP, a debugger) failed waiting for that peer
// in a collective: the run names the stalled one as the failed rank, says it stalled rather than
// died, and keeps what the waiting rank reported. A stopped process acts on no signal but SIGKILL.
void Launch::blameStalledRank(const Rank& failed) {
  for (auto& other : ranks_) {
    if (other.rank == failed.rank) continue;
    const std::string stall = detail::stallOf(other);
    if (stall.empty()) continue;
    const int quiet = static_cast<int>(clock_.seconds() - other.lastEventAt + 0.5);
    failedRank_ = other.rank;
    failReason_ = "rank " + std::to_string(other.rank) + " stalled (" + stall + ", no event for " +
                  std::to_string(quiet) + " s): it did not die, it stopped answering, and the other ranks gave up " +
                  "waiting for it (" + failReason_ + "); find what stopped it (Ctrl-Z, a debugger, a scheduler's " +
                  "suspend), then continue the run with `run --resume`";
    stalledRank_ = true;
    ::kill(other.pid, SIGKILL);
    return;
  }
}

RunEnding Launch::decideEnd() const {
  RunEnding end;
  end.error = failReason_;
  end.error_code = "rank_failed";
  end.failed_rank = failedRank_;
  const Rank* r0 = ranks_.empty() ? nullptr : &ranks_[0];
  if (failedRank_ >= 0 || !startError_.empty()) {
    end.status = proto::kStatusFailed;
  } else if (r0 && r0->end) {
    end.status = r0->end->status;
  } else if (cancelling_) {
    end.status = proto::kStatusCancelled;
  } else {
    end.status = proto::kStatusFailed;
    end.error = "rank 0 ended without reporting a result";
    end.failed_rank = 0;
  }
  if (end.status == proto::kStatusFailed && end.error.empty() && r0 && r0->end)
    end.error = r0->end->summary.error.value_or("failed");
  return end;
}

// Rank 0's summary, completed with what only the launcher knows: the clocks from the command's
// start, the CPU the ranks got, and the failed rank's last log lines.
proto::RunSummary Launch::launcherSummary(const RunEnding& end) const {
  const Rank* r0 = ranks_.empty() ? nullptr : &ranks_[0];
  proto::RunSummary s = r0 && r0->end ? r0->end->summary : proto::RunSummary{};
  if (end.status == proto::kStatusFailed && end.failed_rank >= 0) s.log_tail = detail::tailOfFile(p_.run.rankLog(end.failed_rank));
  if (end.status == proto::kStatusFailed && end.failed_rank >= 0 && stalledRank_) s.failed_rank_stalled = true;
  if (!p_.fineTunedFrom.empty()) s.fine_tuned_from = p_.fineTunedFrom;
  s.launcher_wall_s = clock_.seconds();
  s.run_wall_s = options_.startup_s + clock_.seconds();
  if (const double first = s.first_step_unix.value_or(0); first > 0)
    s.time_to_first_step_s = options_.startup_s + first - startUnix_;
  s.cpu = cpuSummary(s);
  return s;
}

// More ranks than cores (run --allow-oversubscribe): the ranks take turns on the cores. Empty when not.
std::string Launch::oversubscription() const {
  const int cores = logicalCores(), devices = config_.speedups.devices;
  if (devices <= cores) return "";
  return std::to_string(devices) + " ranks (speedups.devices) on " + std::to_string(cores) +
         " cores: oversubscribed, the ranks share the cores, so its speed is not this machine's and no speedup is "
         "taken from it";
}

proto::RunCpu Launch::cpuSummary(const proto::RunSummary& rank0Summary) const {
  double ranksCpu = 0;
  int asked = 0;
  for (const auto& rk : ranks_) ranksCpu += rk.cpu_s, asked += rk.threads;
  const CpuShare share = cpuShareBetween(cpuAtStart_, readCpuTimes(), ranksCpu);
  const std::vector<ProcessStat> now = allProcesses();
  // The experiment's CPU less this process's and its ranks': its other runs (and tools) beside this one.
  const double experimentCpu = familyCpuSeconds(experiment_, now) - experimentCpuAtStart_;
  const double sharedCores =
      share.seconds > 0 ? std::max(0.0, experimentCpu - share.process_cores * share.seconds - ranksCpu) / share.seconds : 0.0;
  std::vector<int> rankPids;
  for (const auto& rk : ranks_) rankPids.push_back(int(rk.pid));
  const auto busiest = busiestOthers(processesAtStart_, now, share.seconds, rankPids);
  proto::RunCpu cpu =
      runCpu(ranksCpu, share.seconds, asked, std::max(0.0, share.other_cores - sharedCores), busiest, sharedCores);
  if (rank0Summary.cpu) {  // rank 0's: fewer threads while others took cores
    cpu.threads = rank0Summary.cpu->threads;
    cpu.min_threads = rank0Summary.cpu->min_threads;
  }
  if (const std::string note = oversubscription(); !note.empty()) {  // its speed is not this machine's either
    cpu.oversubscribed = true;
    cpu.contended = true;
    cpu.note = cpu.note ? *cpu.note + "; " + note : note;
  }
  return cpu;
}

// The run's single end (wb/launch/run_end.h), as rank -1.
Result<RunOutcome> Launch::finish() {
  RunEnding ending = decideEnd();
  ending.summary = launcherSummary(ending);
  RunEndEvents events;
  events.rank = -1;
  events.clock = [this] { return clock_.seconds(); };
  events.send = [this](const json& ev) { emit(ev); };
  const EndedRun ended = endRun(p_.run, config_.name, sink_, std::move(ending), events);
  if (!ended.written.ok()) return ended.written.error();

  int rankCode = ranks_.empty() ? 1 : ranks_[0].exitCode;
  if (ended.failed_rank >= 0) rankCode = ranks_[static_cast<size_t>(ended.failed_rank)].exitCode;
  RunOutcome out;
  out.run_dir = p_.run.root.string();
  out.status = ended.status;
  out.exit_code = proto::exitCodeForStatus(ended.status, rankCode);
  out.summary = ended.summary;
  return out;
}

}  // namespace

void requestStop() { detail::stopRequests().fetch_add(1); }

proto::RunCpu runCpu(double ranksCpuSeconds, double launcherWallSeconds, int askedCores, double otherCores,
                     const std::vector<ProcessLoad>& busiest, double sharedCores) {
  proto::RunCpu c;
  c.cores = logicalCores();
  c.asked_cores = askedCores;
  c.used_cores = launcherWallSeconds > 0 ? ranksCpuSeconds / launcherWallSeconds : 0.0;
  c.other_load_cores = otherCores;
  c.contended = isContended(otherCores);
  c.busiest_others = busiest;
  c.shared_cores = sharedCores;
  c.shared = isContended(sharedCores);
  std::string said;
  char words[200];
  if (*c.contended) {
    std::snprintf(words, sizeof words, "other processes used %.1f of %d cores during this run", otherCores, c.cores);
    const std::string who = describeLoads(busiest);
    said = std::string(words) + (who.empty() ? "" : " (busiest: " + who + ")");
  }
  if (*c.shared) {
    std::snprintf(words, sizeof words, "it shared the cores with its experiment's other runs (%.1f of %d cores beside it)",
                  sharedCores, c.cores);
    said += (said.empty() ? "" : "; ") + std::string(words);
  }
  if (!said.empty()) c.note = said + ": its speed is not this machine's, and speedups against it are not reported";
  return c;
}

Result<RunOutcome> launchRun(const Config& config, const LaunchOptions& options) {
  detail::stopRequests().store(0);
  const IgnoreXfsz ignoreXfsz;
  if (auto errs = validate(config); !errs.empty()) return makeError(Errc::InvalidConfig, formatFieldErrors(errs));
  auto prepared = detail::prepareRunFolder(config, options);  // holds the folder's lock until we return
  if (!prepared.ok()) return prepared.error();
  Launch launch(config, options, *prepared, ignoreXfsz.userIgnored());
  return launch.run();
}

}  // namespace wb::launch
