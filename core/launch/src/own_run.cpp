#include "wb/launch/own_run.h"

#include <csignal>
#include <filesystem>

#include "wb/launch/launcher.h"
#include "wb/proto/config_json.h"

namespace wb::launch {

Result<OwnRun> openOwnRun(const Config& config, const std::string& run_dir, bool resuming, proto::EventSink& sink) {
  namespace fs = std::filesystem;
  OwnRun own;
  own.run.root = newRunDir(config, "", run_dir);
  if (auto st = own.run.create(); !st.ok()) return st.error();
  auto locked = proto::RunLock::acquire(own.run);
  if (!locked.ok()) return locked.error();
  own.lock = std::move(locked).value();
  std::error_code ec;
  if (!resuming && (fs::exists(own.run.summary(), ec) || fs::exists(own.run.events(), ec)))
    return makeError(Errc::InvalidConfig, "--run-dir " + own.run.root.string() +
                                              ": it already holds a run (events.jsonl or summary.json); continue it with "
                                              "--resume " + own.run.lastCheckpoint().string() + ", or choose another folder");
  if (auto st = proto::writeJsonAtomic(own.run.config(), proto::configToJson(config)); !st.ok()) return st.error();
  if (auto st = sink.openFile(own.run.events().string()); !st.ok()) return st.error();
  ::signal(SIGXFSZ, SIG_IGN);
  return own;
}

Result<std::optional<OwnRun>> openRankRun(const Config& config, const std::string& run_dir, bool resuming, int rank,
                                          int world_size, proto::EventSink& sink) {
  if (run_dir.empty() && world_size > 1)
    return makeError(Errc::InvalidConfig, "--run-dir is required when WORLD_SIZE > 1 without --events-stdout "
                                          "(every rank must agree on one shared folder)");
  if (rank != 0) return std::optional<OwnRun>();
  auto own = openOwnRun(config, run_dir, resuming, sink);
  if (!own.ok()) return own.error();
  return std::optional<OwnRun>(std::move(own).value());
}

EndedRun endOwnRun(const OwnRun& own, const Config& config, proto::EventSink& sink, OwnRunEnding ending,
                   const RunEndEvents& events) {
  RunEnding end;
  end.status = ending.status;
  end.error = ending.message;
  end.error_code = errcName(Errc::Checkpoint);
  end.summary = std::move(ending.summary);
  if (end.status == proto::kStatusCancelled && ending.stopped_by)
    if (const std::string who = ending.stopped_by(); !who.empty()) {
      end.error = end.error.empty() ? who : end.error + "; " + who;
      end.summary.error = end.error;
    }
  end.summary.run_wall_s = ending.run_wall_s;
  return endRun(own.run, config.name, sink, std::move(end), events);
}

}  // namespace wb::launch
