// Which folders a search may write into: a new or empty one, or a search of its own to continue.
#include <algorithm>

#include "wb/tune/tune.h"

namespace wb::tune {
namespace fs = std::filesystem;

namespace {

// "a, b, c and 4 more": what the folder holds, sorted, folders marked with a slash.
std::string contents(const fs::path& out) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string() + (it->is_directory(ec) ? "/" : ""));
  std::sort(names.begin(), names.end());
  constexpr size_t kNamed = 5;
  std::string s;
  for (size_t i = 0; i < std::min(kNamed, names.size()); ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > kNamed) s += " and " + std::to_string(names.size() - kNamed) + " more";
  return s;
}

}  // namespace

Status checkSearchFolder(const fs::path& out, const std::vector<std::string>& records) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return {};
  if (!fs::is_directory(out, ec))
    return makeError(Errc::InvalidConfig, "--out " + out.string() + " is a file, not a folder: give a new folder");
  if (fs::is_empty(out, ec)) return {};
  std::string wanted;
  for (const auto& r : records) {
    if (fs::is_regular_file(out / r, ec)) return {};
    wanted += (wanted.empty() ? "" : " or ") + r;
  }
  return makeError(Errc::InvalidConfig, "--out " + out.string() + " holds " + contents(out) + " but no " + wanted +
                                            ": it is not a search to continue; give a new or empty folder");
}

}  // namespace wb::tune
