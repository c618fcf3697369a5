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

// A record an experiment reads back when it continues (reference.json, pairs.json, tune.json,
// jobs.json, ...): missing (no file: none yet), read (a JSON object), or unreadable: cut mid-file,
// emptied, not JSON, or JSON that is no record (a list, a number), with why in words. Each caller
// decides what an unreadable record means; none may take it for a missing one in silence. Never
// throws.
struct StoredRecord {
  enum class State { Missing, Read, Unreadable };
  State state = State::Missing;
  nlohmann::json doc = nlohmann::json::object();  // Read: the record, an object
  std::string why;  // Unreadable: "it is empty", "it is cut mid-file: its JSON stops after 812 bytes", ...
  bool missing() const { return state == State::Missing; }
  bool read() const { return state == State::Read; }
  bool unreadable() const { return state == State::Unreadable; }
};
StoredRecord readRecordFile(const std::filesystem::path& path);
// The refusal of an unreadable record: "<path> is unreadable: <why>; <todo>", InvalidConfig (exit 2,
// as a folder of another experiment): the user restores or removes it, nothing is rebuilt over it.
Error unreadableError(const std::filesystem::path& path, const std::string& why, const std::string& todo);
// Moves an unreadable record aside, beside it, for a record rebuilt from what it described:
// <stem>.unreadable-<n><ext> (reference.unreadable-1.json), never over a file. The new path; Io
// naming both when it cannot be moved.
Result<std::filesystem::path> keepAside(const std::filesystem::path& path);
// A record that is only the result of what its folder holds (try.json, ladder.json: written again
// from the pairs, parts and runs when the experiment continues): unreadable, it is kept aside and
// the line saying so returned ("<path> is unreadable: <why>; kept as try.unreadable-1.json, and
// written again from what the folder measured"); "" when it reads or is missing. Io naming it when
// it cannot be moved (then nothing may be written over it).
Result<std::string> keepUnreadableResult(const std::filesystem::path& path);

}  // namespace wb::proto
