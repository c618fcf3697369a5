#include "wb/launch/command_run.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "leftovers.h"
#include "ranks.h"
#include "wb/common/clock.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/proto/run_status.h"

namespace wb::launch {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr size_t kSkipWarnings = 3;  // unreadable lines warned of while it runs
constexpr double kDrainS = 5;        // its last output, after its end: at most this long

// One command's life: spawned as a rank would be, its output appended to logs/command.log,
// stopped on a stop request or when it stops making progress, then judged by its folder.
class CommandLaunch {
 public:
  CommandLaunch(const std::string& command, const CommandOptions& options)
      : command_(command), options_(options), run_{fs::path(options.run_dir)} {}

  Result<RunOutcome> run() {
    if (auto st = prepare(); !st.ok()) return st.error();
    detail::RankCommand cmd;
    cmd.program = "/bin/sh";
    cmd.args = {"-c", command_};
    cmd.env = {std::string(kRunDirEnv) + "=" + run_.root.string()};
    cmd.log = log();
    cmd.ownSession = true;  // a stop reaches what the shell started, and what is left of it is found at the end
    detail::Leftovers leftovers;
    if (auto st = detail::spawnRank(proc_, cmd); !st.ok())
      return makeError(Errc::Io, options_.arm + ": cannot start `" + command_ + "`: " + st.error().message);
    supervise();
    const auto left = leftovers.end(proc_.pid, options_.kill_grace_s);
    drainToTheEnd();
    readEvents(events_.finish());
    noteAllSkipped();
    warnOfLeftovers(left);
    return finish();
  }

 private:
  fs::path log() const { return run_.logs() / "command.log"; }

  // Refused before anything is made in it: a folder that holds a run.
  Status prepare() {
    std::error_code ec;
    if (fs::exists(run_.summary(), ec) || fs::exists(run_.events(), ec))
      return makeError(Errc::Io, run_.root.string() + ": holds a run already; a finished run is never replaced (choose a new folder)");
    fs::create_directories(run_.logs(), ec);
    if (ec) return makeError(Errc::Io, run_.logs().string() + ": cannot create it: " + ec.message());
    return {};
  }

  // Progress is a byte: events.jsonl or the command's output grew.
  uintmax_t progressBytes() const {
    std::error_code ec;
    const uintmax_t events = fs::exists(run_.events(), ec) ? fs::file_size(run_.events(), ec) : 0;
    const uintmax_t out = fs::exists(log(), ec) ? fs::file_size(log(), ec) : 0;
    return events + out;
  }

  void signal(int sig) { detail::signalGroup(proc_, sig); }

  void forward(const std::vector<json>& events) const {
    if (options_.on_event)
      for (const json& ev : events) options_.on_event(ev);
  }

  // The command's new events, then a warning for each line it wrote that cannot be read (the
  // first few: a script that writes only such lines would otherwise drown its own output).
  void readEvents(const std::vector<json>& events) {
    forward(events);
    const auto& skipped = events_.skippedLines();
    for (; warnedSkips_ < skipped.size() && warnedSkips_ < kSkipWarnings; ++warnedSkips_)
      forward({warning(events_.path() + ": " + proto::describeSkipped(skipped[warnedSkips_]))});
  }

  // At its end, when it wrote more unreadable lines than were warned of: how many in all.
  void noteAllSkipped() const {
    if (events_.malformedLines() > static_cast<int64_t>(kSkipWarnings))
      forward({warning(events_.path() + ": " + events_.skippedNote())});
  }

  json warning(const std::string& message) const {
    return proto::toEvent(proto::WarningEvent{message, events_.path()}, -1, clock_.seconds());
  }

  // What the command left running is ended by now; a process that had left its session is said
  // in a warning, in the run's events (when it wrote a run) and to whoever follows it.
  void warnOfLeftovers(const std::vector<detail::LeftProcess>& left) {
    std::vector<json> warnings;
    for (const auto& p : left)
      if (p.escaped)
        warnings.push_back(proto::toEvent(proto::WarningEvent{detail::leftoverWarning(p, "the command"), std::nullopt},
                                          -1, clock_.seconds()));
    if (warnings.empty()) return;
    if (fs::exists(run_.events())) appendEvents(warnings);
    forward(warnings);
  }

  void appendEvents(const std::vector<json>& events) const {
    proto::EventSink sink;
    if (!sink.openFile(run_.events().string()).ok()) return;
    for (const json& ev : events) sink.write(ev);
  }

  void supervise() {
    std::ofstream out(log(), std::ios::app);
    uintmax_t lastBytes = 0;
    double lastProgress = 0, stopAt = -1;
    int stopsSeen = detail::stopRequests().load();
    for (;;) {
      drain(out);
      readEvents(events_.poll());
      if (detail::reapRank(proc_)) return;
      const double now = clock_.seconds();
      if (const uintmax_t b = progressBytes(); b != lastBytes) lastBytes = b, lastProgress = now;
      if (detail::stopRequests().load() > stopsSeen) {
        stopsSeen = detail::stopRequests().load();
        cancelled_ = true;
        if (stopAt < 0) stopAt = now, signal(SIGTERM);
        else signal(SIGKILL);
      }
      if (!cancelled_ && !hung_ && now - lastProgress > options_.idle_timeout_s) {
        hung_ = true;
        stopAt = now;
        signal(SIGTERM);
      }
      if (stopAt >= 0 && now - stopAt > options_.kill_grace_s) signal(SIGKILL);
    }
  }

  // What it printed last, to the end of the pipe (or until nothing more comes for 100 ms).
  void drainToTheEnd() {
    std::ofstream out(log(), std::ios::app);
    const Stopwatch clock;
    while (drain(out) && clock.seconds() < kDrainS) {
    }
  }

  // Copies what the command printed to its log (waits up to 100 ms for it); true when it copied some.
  bool drain(std::ofstream& out) {
    if (proc_.outFd < 0) {
      ::usleep(100000);
      return false;
    }
    pollfd fd{proc_.outFd, POLLIN, 0};
    if (::poll(&fd, 1, 100) <= 0) return false;
    char buf[65536];
    const ssize_t n = ::read(proc_.outFd, buf, sizeof buf);
    if (n > 0) {
      out.write(buf, n);
      out.flush();
      return true;
    }
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      ::close(proc_.outFd);
      proc_.outFd = -1;
    }
    return false;
  }

  std::string why() const {
    if (hung_) return "wrote nothing for " + std::to_string(int(options_.idle_timeout_s)) + " s and was stopped (does it hang?)";
    if (proc_.signaled) return std::string("was killed by signal ") + std::to_string(proc_.signal) + " (" + strsignal(proc_.signal) + ")";
    return "exited with code " + std::to_string(proc_.exitCode);
  }

  std::string failure(const std::string& what) const {
    std::string tail = detail::tailOfFile(log(), 1500);
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
    return options_.arm + ": `" + command_ + "` " + what + (tail.empty() ? "" : "; its last output:\n" + tail);
  }

  Result<RunOutcome> finish() {
    RunOutcome out;
    out.run_dir = run_.root.string();
    std::error_code ec;
    if (auto doc = proto::readJsonFile(run_.summary()); fs::exists(run_.summary(), ec) && doc.ok()) {
      out.summary = proto::readRunSummary(*doc);
      out.status = out.summary.status.value_or(proto::kStatusFailed);
    }
    const bool clean = !hung_ && !proc_.signaled && proto::isOutcomeExitCode(proc_.exitCode);
    if (out.status.empty() || !clean) return endedBadly(out);
    out.exit_code = proto::exitCodeForStatus(out.status);
    return out;
  }

  // The command left no end (or hung, or died): the run is failed (cancelled, when we stopped
  // it), said in a summary.json the folder gains only when it has none.
  Result<RunOutcome> endedBadly(RunOutcome out) {
    std::error_code ec;
    const bool hadSummary = fs::exists(run_.summary(), ec);
    const bool isRun = run_.looksLikeRun();
    out.status = cancelled_ ? proto::kStatusCancelled : proto::kStatusFailed;
    out.exit_code = proto::exitCodeForStatus(out.status);
    out.summary.status = out.status;
    out.summary.error = cancelled_ ? options_.arm + ": stopped"
                        : !isRun  ? failure(why() + " without writing a run folder in " + run_.root.string() +
                                            " (pass {run_dir} to it, or let its recorder read $" + kRunDirEnv + ")")
                                  : failure(why());
    out.summary.run_wall_s = clock_.seconds();
    if (isRun && !hadSummary) closeRecord(out.summary);
    return out;
  }

  // The run the command started, ended for it: error and end in events.jsonl, summary.json.
  void closeRecord(const proto::RunSummary& summary) {
    const double t = clock_.seconds();
    std::vector<json> closing;
    if (summary.status == std::string(proto::kStatusFailed))
      closing.push_back(proto::toEvent(proto::ErrorEvent{summary.error.value_or(""), "command_failed", std::nullopt}, -1, t));
    closing.push_back(proto::toEvent(proto::EndEvent{*summary.status, summary}, -1, t));
    appendEvents(closing);
    (void)proto::writeJsonAtomic(run_.summary(), proto::toJson(summary));
    forward(closing);
  }

  const std::string command_;
  const CommandOptions& options_;
  const proto::RunDir run_;
  detail::Rank proc_;
  proto::EventFileReader events_{run_.events().string()};
  Stopwatch clock_;
  bool cancelled_ = false, hung_ = false;
  size_t warnedSkips_ = 0;
};

}  // namespace

Result<RunOutcome> launchCommand(const std::string& command, const CommandOptions& options) {
  detail::stopRequests().store(0);
  CommandLaunch launch(command, options);
  return launch.run();
}

}  // namespace wb::launch
