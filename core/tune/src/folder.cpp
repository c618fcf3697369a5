// Which folders a search may write into: a new or empty one, or a search of its own to continue.
#include "wb/common/fs.h"
#include "wb/tune/tune.h"

namespace wb::tune {
namespace fs = std::filesystem;

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
  return makeError(Errc::InvalidConfig, "--out " + out.string() + ": " + describeFolder(out) + " but no " + wanted +
                                            ": it is not a search to continue; give a new or empty folder");
}

}  // namespace wb::tune
