#include "wb/proto/rundir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "wb/common/fs.h"
#include "wb/common/paths.h"

namespace wb::proto {
namespace fs = std::filesystem;

Status RunDir::create() const {
  if (auto st = requireUtf8Path("run folder", root.string()); !st.ok()) return st;
  std::error_code ec;
  for (const auto& d : {root, checkpoints(), logs()}) {
    fs::create_directories(d, ec);
    if (ec)
      return makeError(Errc::Io, "cannot create run folder " + d.string() + ": " + ec.message() +
                                     " (choose a writable runs root with --runs-root or WB_RUNS_ROOT)");
  }
  return {};
}

bool RunDir::looksLikeRun() const {
  std::error_code ec;
  return fs::exists(config(), ec) || fs::exists(events(), ec);
}

std::string RunDir::summaryStatus() const {
  auto doc = readJsonFile(summary());
  return doc.ok() && doc->is_object() ? doc->value("status", std::string()) : std::string();
}

Result<RunLock> RunLock::acquire(const RunDir& run) {
  const std::string path = run.lockFile().string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return makeError(Errc::Io, "cannot open " + path + ": " + std::strerror(errno) + " (is the run folder writable?)");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      return makeError(Errc::InvalidConfig, "run folder " + run.root.string() +
                                                ": another run is using it (it holds " + path +
                                                "); wait for that run to end, or choose another --run-dir");
    return makeError(Errc::Io, "cannot lock " + path + ": " + std::strerror(err));
  }
  return RunLock(fd);
}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);
}

Status writeJsonAtomic(const fs::path& path, const nlohmann::json& doc) {
  return writeFileAtomic(path, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

Result<nlohmann::json> readJsonFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return makeError(Errc::Io, "cannot read " + path.string());
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return makeError(Errc::Io, path.string() + " is not valid JSON");
  return j;
}

namespace {

StoredRecord unreadable(std::string why) { return {StoredRecord::State::Unreadable, nlohmann::json::object(), std::move(why)}; }

// Why `text` is no record, in words; "" when it is one (doc set).
std::string parseRecord(const std::string& text, nlohmann::json& doc) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return "it is empty";
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const std::string size = std::to_string(text.size()) + " bytes";
    if (e.byte >= text.size()) return "it is cut mid-file: its JSON stops after " + size;
    return "it is not valid JSON (at byte " + std::to_string(e.byte) + " of " + size + ")";
  }
  if (!doc.is_object()) return std::string("it holds a JSON ") + doc.type_name() + ", not a record";
  return {};
}

}  // namespace

StoredRecord readRecordFile(const fs::path& path) {
  std::error_code ec;
  const auto type = fs::status(path, ec).type();
  if (type == fs::file_type::not_found) return {};
  if (type != fs::file_type::regular) return unreadable("it is not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return unreadable(std::string("it cannot be opened (") + std::strerror(errno) + ")");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  StoredRecord r;
  if (std::string why = parseRecord(text, r.doc); !why.empty()) return unreadable(std::move(why));
  r.state = StoredRecord::State::Read;
  return r;
}

Error unreadableError(const fs::path& path, const std::string& why, const std::string& todo) {
  return makeError(Errc::InvalidConfig, path.string() + " is unreadable: " + why + "; " + todo);
}

Result<fs::path> keepAside(const fs::path& path) {
  std::error_code ec;
  fs::path aside;
  for (int k = 1; aside.empty() || fs::exists(aside, ec); ++k)
    aside = path.parent_path() / (path.stem().string() + ".unreadable-" + std::to_string(k) + path.extension().string());
  fs::rename(path, aside, ec);
  if (ec) return makeError(Errc::Io, "cannot move " + path.string() + " aside to " + aside.string() + ": " + ec.message());
  return aside;
}

Result<std::string> keepUnreadableResult(const fs::path& path) {
  const StoredRecord doc = readRecordFile(path);
  if (!doc.unreadable()) return std::string();
  auto aside = keepAside(path);
  if (!aside.ok()) return unreadableError(path, doc.why, aside.error().message + ": move it away, and the same command continues");
  return path.string() + " is unreadable: " + doc.why + "; kept as " + aside->filename().string() +
         ", and written again from what the folder measured";
}

}  // namespace wb::proto
