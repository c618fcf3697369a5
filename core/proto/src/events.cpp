#include "wb/proto/events.h"

#include "wb/proto/schema.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

namespace wb::proto {
using nlohmann::json;

namespace {
void sanitize(json& j) {
  if (j.is_number_float()) {
    if (!std::isfinite(j.get<double>())) j = nullptr;
  } else if (j.is_object() || j.is_array()) {
    for (auto& x : j) sanitize(x);
  }
}
}  // namespace

std::string encodeEvent(const json& event) {
  json copy = event;
  sanitize(copy);
  return copy.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<json> decodeEvent(const std::string& line, std::string* why) {
  const auto skip = [why](const std::string& reason) -> std::optional<json> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (line.find_first_not_of(" \t\r") == std::string::npos) return skip("blank");
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return skip("not JSON (a writer killed mid-record leaves such a line)");
  if (!j.is_object()) return skip("not a JSON object");
  if (!j.contains("type") || !j["type"].is_string()) return skip("no \"type\"");
  if (std::string figures = unreadableFigures(j); !figures.empty()) return skip(figures);
  return j;
}

std::string describeSkipped(const SkippedLine& s) {
  return "line " + std::to_string(s.line) + " skipped, " + s.why + ": " + s.text;
}

namespace {
const json* field(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

// False when the file has bytes and the last is not '\n' (a torn last record).
bool endsWithNewline(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in || in.tellg() <= 0) return true;
  in.seekg(-1, std::ios::end);
  return in.get() == '\n';
}
}  // namespace

double numberOr(const json& j, const char* key, double fallback) {
  const json* v = field(j, key);
  return v && v->is_number() ? v->get<double>() : fallback;
}

int64_t intOr(const json& j, const char* key, int64_t fallback) {
  const json* v = field(j, key);
  if (!v) return fallback;
  if (v->is_number_integer()) return v->get<int64_t>();
  if (v->is_number_unsigned()) {
    const auto u = v->get<uint64_t>();
    return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? fallback : static_cast<int64_t>(u);
  }
  if (!v->is_number_float()) return fallback;
  const double d = std::round(v->get<double>());
  // 2^63 is exactly representable; anything at or past it does not fit.
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return fallback;
  return static_cast<int64_t>(d);
}

std::string stringOr(const json& j, const char* key, const std::string& fallback) {
  const json* v = field(j, key);
  return v && v->is_string() ? v->get<std::string>() : fallback;
}

bool boolOr(const json& j, const char* key, bool fallback) {
  const json* v = field(j, key);
  return v && v->is_boolean() ? v->get<bool>() : fallback;
}

const json& objectOr(const json& j, const char* key) {
  static const json empty = json::object();
  const json* v = field(j, key);
  return v && v->is_object() ? *v : empty;
}

std::string describeWriteError(int err) {
  const std::string text = std::strerror(err);
  switch (err) {
    case EFBIG: return text + ": the file size limit (ulimit -f) was reached";
    case ENOSPC: return text + ": the disk is full";
    case EDQUOT: return text + ": the disk quota is used up";
    case EROFS: return text + ": the file system is read-only";
    case EIO: return text + ": the disk or file system reported an I/O error";
    default: return text;
  }
}

EventSink::~EventSink() {
  if (fd_ >= 0) ::close(fd_);
}

Status EventSink::openFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool clean = endsWithNewline(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return makeError(Errc::Io, "cannot open " + path + " for appending events (is the folder writable?): " +
                                   std::strerror(errno));
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  path_ = path;
  pending_.clear();
  pendingBytes_ = 0;
  waiting_ = 0;
  abandoned_ = false;
  tornBytes_ = 0;
  report_ = EventFileReport{};
  struct stat st {};
  goodSize_ = ::fstat(fd_, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  if (!clean) {  // end the torn line: it stays one malformed line
    pending_.emplace_back("\n");
    pendingBytes_ = 1;
    drainPending();
  }
  return {};
}

void EventSink::write(const json& event) {
  const std::string line = encodeEvent(event) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0) appendToFile(line);
  if (stream_) {
    std::fwrite(line.data(), 1, line.size(), stream_);
    std::fflush(stream_);
  }
  if (observer_) observer_(event);
}

bool EventSink::retryPending() {
  std::lock_guard<std::mutex> lock(mu_);
  return fd_ < 0 || abandoned_ || drainPending();
}

void EventSink::abandonFile() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0 || abandoned_) return;
  abandoned_ = true;
  (void)repairTornTail();  // a record cut short does not stay behind as a torn line
  report_.lost += static_cast<int64_t>(pending_.size());
  pending_.clear();
  pendingBytes_ = 0;
  waiting_ = 0;
}

EventFileReport EventSink::fileReport() const {
  std::lock_guard<std::mutex> lock(mu_);
  EventFileReport r = report_;
  r.pending = static_cast<int64_t>(pending_.size());
  return r;
}

void EventSink::appendToFile(const std::string& line) {
  if (abandoned_) {
    ++report_.lost;
    return;
  }
  pending_.push_back(line);
  pendingBytes_ += line.size();
  while (pendingBytes_ > kMaxPendingBytes && pending_.size() > 1) {  // the oldest go first
    pendingBytes_ -= pending_.front().size();
    pending_.pop_front();
    if (waiting_ > 0) --waiting_;
    ++report_.lost;
  }
  drainPending();
}

// Writes the held-back records in order, stopping at the first the file refuses.
bool EventSink::drainPending() {
  while (!pending_.empty()) {
    if (!repairTornTail()) {
      waiting_ = pending_.size();
      return false;
    }
    const std::string& line = pending_.front();
    size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        const int err = n < 0 ? errno : EIO;
        tornBytes_ = done;
        noteFailure(err);
        waiting_ = pending_.size();  // each of these has now missed its moment
        return false;
      }
    }
    goodSize_ += line.size();
    pendingBytes_ -= line.size();
    pending_.pop_front();
    if (waiting_ > 0) --waiting_, ++report_.late;
  }
  return true;
}

// A record cut short by a failed write: cut the file back to its last whole record when nobody
// else has appended since, else end the fragment with a newline (one unreadable line).
bool EventSink::repairTornTail() {
  if (tornBytes_ == 0) return true;
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) == goodSize_ + tornBytes_ &&
      ::ftruncate(fd_, static_cast<off_t>(goodSize_)) == 0) {
    tornBytes_ = 0;
    return true;
  }
  const ssize_t n = ::write(fd_, "\n", 1);
  if (n != 1) {
    noteFailure(n < 0 ? errno : EIO);
    return false;
  }
  if (::fstat(fd_, &st) == 0) goodSize_ = static_cast<uint64_t>(st.st_size);
  tornBytes_ = 0;
  return true;
}

void EventSink::noteFailure(int err) {
  ++report_.failed_writes;
  report_.error = describeWriteError(err);
}

std::vector<std::string> LineBuffer::feed(const char* data, size_t size) {
  std::vector<std::string> out;
  pending_.append(data, size);
  size_t start = 0;
  for (;;) {
    size_t nl = pending_.find('\n', start);
    if (nl == std::string::npos) break;
    std::string line = pending_.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(std::move(line));
    start = nl + 1;
  }
  pending_.erase(0, start);
  return out;
}

std::optional<std::string> LineBuffer::finish() {
  if (pending_.empty()) return std::nullopt;
  std::string s = std::move(pending_);
  pending_.clear();
  return s;
}

std::vector<json> EventFileReader::poll() {
  std::vector<json> out;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return out;
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(in.tellg());
  if (size < offset_) {  // truncated or replaced: start over
    offset_ = 0;
    lineNo_ = 0;
    lines_ = LineBuffer();
  }
  if (size == offset_) return out;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk(size - offset_, '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<size_t>(in.gcount()));
  offset_ += chunk.size();
  for (auto& line : lines_.feed(chunk)) decode(line, out);
  return out;
}

void EventFileReader::decode(const std::string& line, std::vector<json>& out) {
  ++lineNo_;
  std::string why;
  if (auto ev = decodeEvent(line, &why)) {
    out.push_back(std::move(*ev));
    return;
  }
  if (line.find_first_not_of(" \t\r") == std::string::npos) return;  // blank: nothing lost
  ++malformed_;
  if (skipped_.size() < kKeptSkipped) skipped_.push_back({lineNo_, why, line.substr(0, 200)});
}

std::vector<json> EventFileReader::finish() {
  auto out = poll();
  if (auto tail = lines_.finish()) decode(*tail, out);
  return out;
}

std::string EventFileReader::skippedNote() const {
  if (malformed_ == 0) return "";
  std::string note = std::to_string(malformed_) + " unreadable line(s) skipped";
  return skipped_.empty() ? note : note + "; the first: " + describeSkipped(skipped_.front());
}

std::vector<json> readEventsFile(const std::string& path, int64_t* malformed, std::string* note) {
  EventFileReader reader(path);
  auto events = reader.finish();
  if (malformed) *malformed = reader.malformedLines();
  if (note) *note = reader.skippedNote();
  return events;
}

EventsFileEnd settleEventsFile(EventSink& sink, const std::string& trainingStatus) {
  EventsFileEnd out;
  const bool whole = sink.retryPending();
  if (!whole) sink.abandonFile();
  const EventFileReport r = sink.fileReport();
  out.late = r.late;
  out.error = r.error;
  if (!whole || r.lost > 0) {
    out.lost = r.lost + (whole ? 0 : 2);  // abandoned: the error and end written next are lost too
    out.message = sink.filePath() + ": " + std::to_string(out.lost) + " event record(s) could not be written (" +
                  r.error + "), the run's end among them; the run's record is incomplete, so it ends failed " +
                  "(training itself ended " + trainingStatus + "; summary.json holds what it reached). " +
                  "Free the space or lift the limit before the next run";
  } else if (r.late > 0) {
    out.message = sink.filePath() + ": " + std::to_string(r.late) + " event record(s) could not be written when " +
                  "they came (" + r.error + ") and were written later, in order; nothing is missing";
  }
  return out;
}

}  // namespace wb::proto
