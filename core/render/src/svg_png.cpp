// rsvg-convert as a child process (posix_spawnp), its exit status and what it left.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <vector>

#include "wb/common/fs.h"
#include "wb/render/svg_png.h"

extern char** environ;

namespace wb::render {
namespace fs = std::filesystem;

namespace {

// Runs argv[0] (looked up on PATH) and waits; the exit status, or -errno when it cannot start.
int spawnAndWait(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
  if (rc != 0) return -rc;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -errno;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

Status svgToPng(const fs::path& svg, const fs::path& png, double zoom) {
  const fs::path tmp = png.string() + ".tmp-" + std::to_string(::getpid());
  const int rc = spawnAndWait({"rsvg-convert", "--format", "png", "--zoom", std::to_string(zoom), "--output",
                               tmp.string(), svg.string()});
  std::error_code ec;
  if (rc != 0) {
    fs::remove(tmp, ec);
    if (rc == -ENOENT)
      return makeError(Errc::Io, png.string() + ": not written: rsvg-convert is not installed (install librsvg2-bin, "
                                                "e.g. bash packaging/setup.sh); " + svg.filename().string() + " has the chart");
    if (rc < 0) return makeError(Errc::Io, png.string() + ": cannot start rsvg-convert: " + std::strerror(-rc));
    return makeError(Errc::Io, png.string() + ": rsvg-convert failed (exit " + std::to_string(rc) + ") on " + svg.string());
  }
  if (auto st = fsyncPath(tmp); !st.ok()) {
    fs::remove(tmp, ec);
    return st;
  }
  fs::rename(tmp, png, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return makeError(Errc::Io, png.string() + ": cannot write it: " + ec.message());
  }
  return {};
}

}  // namespace wb::render
