#include "wb/proto/events.h"

#include <cmath>
#include <fstream>
#include <limits>

namespace wb::proto {
using nlohmann::json;

json makeEvent(const std::string& type, int rank, double t) {
  return json{{"v", kEventVersion}, {"type", type}, {"rank", rank}, {"t", t}, {"wall", unixSeconds()}};
}

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

std::optional<json> decodeEvent(const std::string& line) {
  if (line.find_first_not_of(" \t\r") == std::string::npos) return std::nullopt;
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("type") || !j["type"].is_string())
    return std::nullopt;
  return j;
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

Status EventSink::openFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool clean = endsWithNewline(path);
  file_.open(path, std::ios::app | std::ios::binary);
  if (!file_) return makeError(Errc::Io, "cannot open " + path + " for appending events (is the folder writable?)");
  if (!clean) file_ << '\n' << std::flush;  // end the torn line: it stays one malformed line
  return {};
}

void EventSink::write(const json& event) {
  const std::string line = encodeEvent(event) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  if (file_.is_open()) {
    file_ << line;
    file_.flush();
  }
  if (stream_) {
    std::fwrite(line.data(), 1, line.size(), stream_);
    std::fflush(stream_);
  }
  if (observer_) observer_(event);
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
    lines_ = LineBuffer();
  }
  if (size == offset_) return out;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk(size - offset_, '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<size_t>(in.gcount()));
  offset_ += chunk.size();
  for (auto& line : lines_.feed(chunk)) {
    if (auto ev = decodeEvent(line)) out.push_back(std::move(*ev));
    else if (line.find_first_not_of(" \t") != std::string::npos) ++malformed_;
  }
  return out;
}

std::vector<json> EventFileReader::finish() {
  auto out = poll();
  if (auto tail = lines_.finish()) {
    if (auto ev = decodeEvent(*tail)) out.push_back(std::move(*ev));
    else ++malformed_;
  }
  return out;
}

std::vector<json> readEventsFile(const std::string& path, int64_t* malformed) {
  EventFileReader reader(path);
  auto events = reader.finish();
  if (malformed) *malformed = reader.malformedLines();
  return events;
}

}  // namespace wb::proto
