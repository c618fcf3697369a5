#include "wb/proto/rundir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

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

}  // namespace wb::proto
