#include "wb/common/fs.h"

#include "wb/common/hash.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace wb {
namespace fs = std::filesystem;

Status fsyncPath(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return makeError(Errc::Io, "cannot open " + path.string() + " to sync: " + std::strerror(errno));
  ::fsync(fd);
  ::close(fd);
  return {};
}

Status writeFileAtomic(const fs::path& path, const std::string& contents) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return makeError(Errc::Io, "cannot write " + path.string() + ": " + std::strerror(errno) +
                                   " (check that the folder exists and is writable)");
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      fs::remove(tmp, ec);
      return makeError(Errc::Io, "cannot write " + path.string() + ": " + std::strerror(err) +
                                     (err == ENOSPC ? " (the disk is full; free space and retry)" : ""));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    fs::remove(tmp, ec);
    return makeError(Errc::Io, "cannot sync " + path.string() + ": " + std::strerror(err));
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    fs::remove(tmp, ec);
    return makeError(Errc::Io, "cannot rename into " + path.string() + ": " + std::strerror(err));
  }
  (void)fsyncPath(dir);
  return {};
}

Result<std::string> readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(Errc::Io, "cannot read " + path.string() + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string describeFolder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return "it is a file";
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir, ec))
    names.push_back(e.path().filename().string() + (e.is_directory(ec) ? "/" : ""));
  if (names.empty()) return "it is empty";
  std::sort(names.begin(), names.end());
  constexpr size_t kShown = 3;
  std::string out = "it holds ";
  const size_t shown = std::min(names.size(), kShown);
  for (size_t i = 0; i < shown; ++i) out += (i == 0 ? "" : i + 1 == shown && names.size() == shown ? " and " : ", ") + names[i];
  if (names.size() > shown) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

namespace {

std::string entryLine(const fs::path& root, const fs::directory_entry& e, std::error_code& ec) {
  const auto size = e.file_size(ec);
  const auto mtime = fs::last_write_time(e.path(), ec).time_since_epoch().count();
  return fs::relative(e.path(), root, ec).generic_string() + " " + std::to_string(size) + " " + std::to_string(mtime);
}

}  // namespace

std::string folderFingerprint(const fs::path& path, size_t maxFiles) {
  std::error_code ec;
  std::vector<std::string> lines;
  if (fs::is_regular_file(path, ec)) {
    lines.push_back(entryLine(path.parent_path(), fs::directory_entry(path, ec), ec));
  } else if (fs::is_directory(path, ec)) {
    for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator() && lines.size() < maxFiles; it.increment(ec))
      if (it->is_regular_file(ec)) lines.push_back(entryLine(path, *it, ec));
  }
  if (ec || lines.empty()) return "";
  std::sort(lines.begin(), lines.end());
  std::string text;
  for (const auto& line : lines) text += line + '\n';
  return fnv1aHex(text);
}

}  // namespace wb
