#include "wb/proto/rundir.h"

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
