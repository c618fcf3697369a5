#include "run_folder.h"

#include <algorithm>
#include <filesystem>

#include "wb/common/paths.h"
#include "wb/common/resume_rules.h"
#include "wb/proto/config_json.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"

namespace wb::launch::detail {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// What the ranks would refuse when resuming (the trainer checks the same against the checkpoint),
// found before the run folder is touched, so a refused resume leaves it as it was.
Status checkResumable(PreparedRun& p, const std::string& dir, const std::string& kind, const Config& config,
                      bool fineTune) {
  // A finished run has nothing left to train at its train.epochs.
  int64_t trained = -1;
  for (const auto& ev : proto::readEventsFile(p.run.events().string())) {
    if (!proto::isEvent<proto::CheckpointEvent>(ev)) continue;
    const proto::CheckpointEvent c = proto::readCheckpointEvent(ev);
    if (c.kind == kind) trained = c.batch_in_epoch == 0 ? c.epoch : -1;
  }
  if (auto st = checkEpochsLeft(dir, trained, config.train.epochs); !st) return st;
  // The weights and the optimiser state belong to the model, the data and the optimiser that
  // wrote them (another dataset only with --fine-tune).
  auto previous = proto::readJsonFile(p.run.config());
  auto was = [&](const char* field) {
    return previous.ok() && previous->is_object() ? previous->value(json::json_pointer(field), std::string())
                                                  : std::string();
  };
  if (auto st = checkSameModel(dir, was("/model/name"), config.model.name); !st) return st;
  const std::string wasData = was("/data/dataset");
  if (auto st = checkSameDataset(dir, wasData, config.data.dataset, fineTune); !st) return st;
  if (fineTune) p.fineTunedFrom = wasData;
  return checkSameOptimizer(dir, was("/optim/name"), config.optim.name);
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

// --resume: the run folder, locked, with the checkpoint the ranks continue from.
Status lockForResume(PreparedRun& p, const Config& config, const LaunchOptions& options) {
  p.run.root = fs::absolute(options.resume_dir);
  if (!p.run.looksLikeRun())
    return makeError(Errc::InvalidConfig, "--resume " + options.resume_dir +
                                              ": not a run directory (no config.json or events.jsonl)");
  auto locked = proto::RunLock::acquire(p.run);
  if (!locked.ok()) return locked.error();
  p.lock = std::move(locked).value();
  if (auto st = checkResumeFrom(options.resume_from); !st) return st.error();
  const fs::path from = options.resume_from == "best" ? p.run.bestCheckpoint() : p.run.lastCheckpoint();
  if (!fs::exists(from))
    return makeError(Errc::Checkpoint, from.string() +
                                           ": no checkpoint to resume from (the run ended before its first epoch)");
  p.resumeCheckpoint = from.string();
  return checkResumable(p, options.resume_dir, options.resume_from, config, options.fine_tune);
}

// A resume with --set changes: the config it ran with stays, as config.before-resume-N.json,
// and the changes are listed for the `run` event.
Status keepReplacedConfig(PreparedRun& p) {
  auto previous = proto::readJsonFile(p.run.config());
  if (!previous.ok() || *previous == p.resolved) return {};
  for (const auto& op : json::diff(*previous, p.resolved)) {
    std::string field = op.value("path", "");
    std::replace(field.begin(), field.end(), '/', '.');
    const json before = (*previous).value(json::json_pointer(op.value("path", "")), json());
    p.configChanges.push_back(field.substr(1) + ": " + before.dump() + " -> " + op.value("value", json()).dump());
  }
  fs::path kept;
  for (int n = 1; kept.empty() || fs::exists(kept); ++n)
    kept = p.run.root / ("config.before-resume-" + std::to_string(n) + ".json");
  std::error_code ec;
  fs::rename(p.run.config(), kept, ec);
  if (ec) return makeError(Errc::Io, p.run.config().string() + ": cannot keep it as " + kept.string() + ": " + ec.message());
  return {};
}

}  // namespace

Result<PreparedRun> prepareRunFolder(const Config& config, const LaunchOptions& options) {
  PreparedRun p;
  p.resolved = proto::configToJson(config);
  const bool resuming = !options.resume_dir.empty();
  if (resuming) {
    if (auto st = lockForResume(p, config, options); !st.ok()) return st.error();
  } else {
    p.run.root = newRunDir(config, options.runs_root, options.run_dir);
  }
  if (auto st = p.run.create(); !st.ok()) return st.error();
  if (!resuming) {
    auto locked = proto::RunLock::acquire(p.run);
    if (!locked.ok()) return locked.error();
    p.lock = std::move(locked).value();
    if (auto st = prepareFreshFolder(p.run, options.overwrite); !st.ok()) return st.error();
  }
  if (resuming && fs::exists(p.run.config()))
    if (auto st = keepReplacedConfig(p); !st.ok()) return st.error();
  if (!resuming || !fs::exists(p.run.config()))
    if (auto st = proto::writeJsonAtomic(p.run.config(), p.resolved); !st.ok()) return st.error();
  return p;
}

}  // namespace wb::launch::detail

namespace wb::launch {

std::filesystem::path newRunDir(const Config& config, const std::string& runs_root, const std::string& run_dir) {
  namespace fs = std::filesystem;
  if (!run_dir.empty()) return fs::absolute(run_dir);
  return fs::absolute((runs_root.empty() ? defaultRunsRoot() : fs::path(runs_root)) / makeRunId(config.name));
}

}  // namespace wb::launch
