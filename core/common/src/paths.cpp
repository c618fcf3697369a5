#include "wb/common/paths.h"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>

namespace wb {
namespace fs = std::filesystem;

fs::path defaultFashionMnistDir() {
  if (const char* env = std::getenv("WB_FASHION_MNIST_DIR"); env && *env) return env;
  return "/usr/share/datasets/fashion-mnist";
}

fs::path defaultRunsRoot() {
  if (const char* env = std::getenv("WB_RUNS_ROOT"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    return fs::path(xdg) / "speedup-workbench" / "runs";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".local" / "share" / "speedup-workbench" / "runs";
}

fs::path defaultCacheDir() {
  if (const char* env = std::getenv("WB_CACHE_DIR"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "speedup-workbench" / "decoded";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".cache" / "speedup-workbench" / "decoded";
}

fs::path unpackedDatasetDir() {
  if (const char* env = std::getenv("WB_CACHE_DIR"); env && *env) return fs::path(env) / "unpacked";
  return defaultCacheDir().parent_path() / "unpacked";
}

std::string slugify(const std::string& name) {
  std::string out;
  for (char ch : name) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
    else if (!out.empty() && out.back() != '-') out += '-';
    if (out.size() >= 40) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "run" : out;
}

std::string makeRunId(const std::string& name) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::random_device rd;
  std::mt19937 gen(rd() ^ static_cast<unsigned>(::getpid()) ^
                   static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count()));
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", static_cast<unsigned>(gen() & 0xffffu));
  return std::string(stamp) + "-" + slugify(name) + "-" + suffix;
}

std::optional<size_t> invalidUtf8At(const std::string& s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = byte(i);
    size_t n = 0;
    uint32_t cp = 0, min = 0;
    if (c < 0x80) n = 1, cp = c;
    else if ((c & 0xE0) == 0xC0) n = 2, cp = c & 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0) n = 3, cp = c & 0x0F, min = 0x800;
    else if ((c & 0xF8) == 0xF0) n = 4, cp = c & 0x07, min = 0x10000;
    else return i;
    if (i + n > s.size()) return i;
    for (size_t k = 1; k < n; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += n;
  }
  return std::nullopt;
}

namespace {
// The path with every non-ASCII or control byte as \xNN, so the message itself is valid UTF-8.
std::string escapedBytes(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}
}  // namespace

Status requireUtf8Path(const std::string& what, const std::string& path) {
  const auto at = invalidUtf8At(path);
  if (!at) return {};
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(path[*at]));
  return makeError(Errc::InvalidConfig,
                   what + " " + escapedBytes(path) + ": the path must be valid UTF-8 (byte " + byte + " at offset " +
                       std::to_string(*at) + " is not); runs record their folder in JSON, which holds only UTF-8: " +
                       "rename the folder or choose one with a UTF-8 name");
}

}  // namespace wb
