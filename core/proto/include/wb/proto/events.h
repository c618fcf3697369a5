#pragma once
// The event stream: one JSON object per line (events.jsonl, and stdout with --events-stdout).
//
// Schema version kEventVersion. Every event has: v, type, rank, t (seconds since the run
// started, per rank), wall (unix seconds): wb/proto/event_types.h's Envelope (readEnvelope).
// The fields of each type are code, not this comment:
// one struct per type in wb/proto/event_types.h (its field lists in event_types.cpp), written
// with toEvent/writeFields and read with read<Type>Event by every writer and reader:
//   run         RunEvent        the launcher's first line: run_dir, run_id, name, config, ...
//   start       StartEvent      each rank: config, versions, host, device, threads, world_size,
//                               model, dataset, speedups{<name>: SpeedupStatus}, lr_scaling, ...
//   step        StepEvent       every log interval: loss, throughput, ms{...}, mem, cpu, comm, amp
//                               (MemoryPart, CpuPart, CommPart, AmpPart)
//   eval        EvalEvent       val_loss, val_acc, eval_ms
//   epoch       EpochEvent      seconds, train_seconds, train_samples_per_s, train_loss
//   early_stop  EarlyStopEvent  reason, best_epoch, best_value, monitor
//   checkpoint  CheckpointEvent kind (last|best), path, epoch, step
//   warning     WarningEvent    message, [path]
//   error       ErrorEvent      message, code, [log_tail]; the event's rank is the one that failed
//   end         EndEvent        status (ok|failed|cancelled|early-stopped|diverged), summary{...}
// The ladder's own stream (workbench-cli ladder --events-stdout): ladder (LadderEvent),
// rung_start, rung_end (RungStartEvent, RungEndEvent), warning, and its end (LadderEndEvent).
// The end's summary is summary.json's record: wb/proto/run_summary.h (RunSummary), whose field
// list names each clock for what it covers.
// Readers ignore unknown fields and types; writers never change the meaning of a field
// without bumping kEventVersion.
#include <cstdio>
#include <deque>
#include <fstream>  // kept for includers that relied on it
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/clock.h"
#include "wb/common/result.h"

namespace wb::proto {

constexpr int kEventVersion = 1;

// Run end states (summary.json "status" and the end event).
inline constexpr const char* kStatusOk = "ok";
inline constexpr const char* kStatusFailed = "failed";
inline constexpr const char* kStatusCancelled = "cancelled";
inline constexpr const char* kStatusEarlyStopped = "early-stopped";
inline constexpr const char* kStatusDiverged = "diverged";

// {"v":1,"type":type,"rank":rank,"t":t,"wall":<unix seconds>}
nlohmann::json makeEvent(const std::string& type, int rank, double t);

// Serialises one event to a single line (no trailing newline). Non-finite numbers become null.
std::string encodeEvent(const nlohmann::json& event);

// Parses one line. nullopt for blank or malformed lines: not a JSON object, no "type", or a step
// or eval whose figures cannot be read (wb/proto/schema.h's unreadableFigures: the one rule every
// reader skips by, the run's files and the streams alike). `why`, when given, says which.
std::optional<nlohmann::json> decodeEvent(const std::string& line, std::string* why = nullptr);

// A line a reader skipped: its number in the file (from 1), why, and how it begins.
struct SkippedLine {
  int64_t line = 0;
  std::string why;
  std::string text;  // at most its first 200 bytes
};

// `line 3 skipped, a step event's "loss" is "abc", not a number: {"type":"step",...`
std::string describeSkipped(const SkippedLine& skipped);

// Tolerant readers of one field of an event (or any JSON object): a missing key, null (a
// non-finite number is written as null), a value of another type or a j that is not an object
// gives the fallback. They never throw. intOr rounds a finite float to the nearest integer and
// gives the fallback outside int64_t.
double numberOr(const nlohmann::json& j, const char* key, double fallback);
int64_t intOr(const nlohmann::json& j, const char* key, int64_t fallback);
std::string stringOr(const nlohmann::json& j, const char* key, const std::string& fallback);
bool boolOr(const nlohmann::json& j, const char* key, bool fallback);
// The object under key, or a static empty object.
const nlohmann::json& objectOr(const nlohmann::json& j, const char* key);

// What became of the records meant for the events file (EventSink::fileReport()).
struct EventFileReport {
  int64_t failed_writes = 0;  // write attempts the file refused (one record may be tried several times)
  int64_t late = 0;           // records written after a failed write held them back (in order)
  int64_t pending = 0;        // records held back now, waiting for the file to take them
  int64_t lost = 0;           // records that will never be in the file (abandoned or over the backlog cap)
  std::string error;          // the last failure, in words: "File too large: the file size limit (ulimit -f) ..."
};

// Thread-safe event writer: appends to a file (written through per record) and/or a FILE* stream.
//
// A record the file refuses (disk full, the file size limit, an I/O error) is not dropped: it
// is held back, in order, and every later write() first tries the held-back records again
// (retryPending() tries without a new record). A record cut short by the failure is removed
// again (the file is cut back to its last whole record; if that cannot be done, a newline ends
// the fragment, which stays one unreadable line), so no torn line is left in the file. At most
// kMaxPendingBytes are held; beyond that the oldest are lost and counted. abandonFile() gives up
// on the file: what is held back, and every later record for it, is lost and counted. The
// stream and the observer see every record whatever the file does.
class EventSink {
 public:
  static constexpr size_t kMaxPendingBytes = size_t(64) << 20;

  EventSink() = default;
  ~EventSink();
  EventSink(const EventSink&) = delete;
  EventSink& operator=(const EventSink&) = delete;
  // Opens (appends to) path. A file whose last line was torn (it does not end in '\n', e.g. a
  // writer killed mid-record) gets a newline first, so the next record starts a line of its own.
  // Fails with an Io error naming the file.
  Status openFile(const std::string& path);
  void setStream(std::FILE* stream) { stream_ = stream; }
  // Optional in-process observer (tests, the launcher).
  void setObserver(std::function<void(const nlohmann::json&)> fn) { observer_ = std::move(fn); }
  void write(const nlohmann::json& event);
  bool hasFile() const { return fd_ >= 0; }
  const std::string& filePath() const { return path_; }
  // Tries the held-back records again. True when the file holds every record written so far.
  bool retryPending();
  // Gives up on the file (the run is ending and it still refuses): held-back and later records
  // are lost; a record cut short is taken back out of the file.
  void abandonFile();
  EventFileReport fileReport() const;

 private:
  void appendToFile(const std::string& line);
  bool drainPending();
  bool repairTornTail();
  void noteFailure(int err);

  mutable std::mutex mu_;
  int fd_ = -1;
  std::string path_;
  uint64_t goodSize_ = 0;     // the file's size after its last whole record
  size_t tornBytes_ = 0;      // bytes of a record cut short, after goodSize_
  std::deque<std::string> pending_;
  size_t pendingBytes_ = 0;
  size_t waiting_ = 0;        // pending records a write() has already returned without
  bool abandoned_ = false;
  EventFileReport report_;
  std::FILE* stream_ = nullptr;
  std::function<void(const nlohmann::json&)> observer_;
};

// Words for an errno from writing a file: what ran out, and the system's own text.
std::string describeWriteError(int err);

// Splits a byte stream into lines, keeping a partial last line until it completes.
class LineBuffer {
 public:
  // Appends bytes; returns the complete lines (without '\n', '\r' stripped).
  std::vector<std::string> feed(const char* data, size_t size);
  std::vector<std::string> feed(const std::string& s) { return feed(s.data(), s.size()); }
  // The incomplete tail (for diagnostics, and for flush at EOF).
  const std::string& pending() const { return pending_; }
  // At end of stream: returns the pending tail as a final line if non-empty, then clears it.
  std::optional<std::string> finish();

 private:
  std::string pending_;
};

// Reads an events.jsonl incrementally (follows a growing file). Malformed lines (decodeEvent's)
// are skipped and counted, the first kKeptSkipped kept with their number and why; a partial last
// line waits for more data.
class EventFileReader {
 public:
  static constexpr size_t kKeptSkipped = 20;

  explicit EventFileReader(std::string path) : path_(std::move(path)) {}
  // Reads whatever was appended since the last call. Returns the new events.
  std::vector<nlohmann::json> poll();
  // At the end (the run finished): a pending partial line is tried once as a last event.
  std::vector<nlohmann::json> finish();
  int64_t malformedLines() const { return malformed_; }
  const std::vector<SkippedLine>& skippedLines() const { return skipped_; }
  // "" when none was skipped; else how many, and the first (describeSkipped).
  std::string skippedNote() const;
  const std::string& path() const { return path_; }

 private:
  void decode(const std::string& line, std::vector<nlohmann::json>& out);

  std::string path_;
  uint64_t offset_ = 0;
  LineBuffer lines_;
  int64_t lineNo_ = 0;
  int64_t malformed_ = 0;
  std::vector<SkippedLine> skipped_;
};

// What events.jsonl holds at the run's end. Records a failed write held back get a last try;
// what the file still refuses is lost for good (the run's closing error and end among them),
// and a run whose record lost anything ends failed: its results cannot be read back from its
// folder. Records that were only late (written once the file took them again) lose nothing.
struct EventsFileEnd {
  int64_t lost = 0;   // records not in the file, counting the closing error and end to come
  int64_t late = 0;
  std::string error;  // the file's last failure, in words
  std::string message;
};

EventsFileEnd settleEventsFile(EventSink& sink, const std::string& trainingStatus);

// Reads a whole events file once; `malformed` and `note` (skippedNote), when given, say what it skipped.
std::vector<nlohmann::json> readEventsFile(const std::string& path, int64_t* malformed = nullptr,
                                           std::string* note = nullptr);

}  // namespace wb::proto
