#pragma once
// Run directory layout (docs/runs.md "Run directory and events"):
//   <root>/<run-id>/config.json, events.jsonl, summary.json, env.json,
//                   checkpoints/{last.pt,best.pt}, logs/rank-N.log
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"

namespace wb::proto {

struct RunDir {
  std::filesystem::path root;

  std::filesystem::path config() const { return root / "config.json"; }
  std::filesystem::path events() const { return root / "events.jsonl"; }
  std::filesystem::path summary() const { return root / "summary.json"; }
  std::filesystem::path env() const { return root / "env.json"; }
  std::filesystem::path checkpoints() const { return root / "checkpoints"; }
  std::filesystem::path lastCheckpoint() const { return checkpoints() / "last.pt"; }
  std::filesystem::path bestCheckpoint() const { return checkpoints() / "best.pt"; }
  std::filesystem::path logs() const { return root / "logs"; }
  std::filesystem::path rankLog(int rank) const { return logs() / ("rank-" + std::to_string(rank) + ".log"); }
  std::filesystem::path lockFile() const { return root / ".lock"; }
  std::filesystem::path rendezvousFile() const { return root / ".rendezvous"; }  // local ranks' FileStore
  std::string id() const { return root.filename().string(); }

  // Creates root, checkpoints/ and logs/. Error names the folder and the fix; a root that is
  // not valid UTF-8 is refused (InvalidConfig, nothing created): see wb::requireUtf8Path.
  Status create() const;
  // True when root holds a config.json or events.jsonl.
  bool looksLikeRun() const;
  // The status its summary.json says ("ok", "failed", ...); "" when it has none (not ended, or cut).
  std::string summaryStatus() const;
};

// A run folder belongs to one live run: an advisory flock on <root>/.lock, held for the
// holder's life and released by the kernel when its process ends (a crash leaves no stale lock).
// The launcher holds it for a whole run, a standalone worker's rank 0 for its run. Move-only;
// the descriptor is close-on-exec, so ranks do not inherit it.
class RunLock {
 public:
  // Takes the lock on an existing run folder. InvalidConfig (exit 2) naming the folder when
  // another run holds it; Io when the lock file cannot be opened.
  static Result<RunLock> acquire(const RunDir& run);
  RunLock() = default;
  RunLock(RunLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();

 private:
  explicit RunLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Writes a JSON document atomically (pretty-printed).
Status writeJsonAtomic(const std::filesystem::path& path, const nlohmann::json& doc);
Result<nlohmann::json> readJsonFile(const std::filesystem::path& path);

}  // namespace wb::proto
