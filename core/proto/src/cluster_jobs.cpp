#include "wb/proto/cluster_jobs.h"

#include <algorithm>

#include "wb/common/fs.h"
#include "wb/proto/fields.h"
#include "wb/proto/rundir.h"

namespace wb::proto {
namespace fs = std::filesystem;

WB_FIELDS(ClusterTask) {
  f("run_dir", e.run_dir), f("job", e.job), f("state", e.state), f("reason", e.reason), f("updated_at", e.updated_at);
}

WB_FIELDS(ClusterJobs) { f("tasks", e.tasks); }

Result<ClusterJobs> readClusterJobs(const fs::path& folder) {
  const fs::path file = folder / kClusterJobsFile;
  const StoredRecord doc = readRecordFile(file);
  if (doc.missing()) return ClusterJobs{};
  std::string why = doc.why;
  if (doc.read() && !(doc.doc.contains("tasks") && doc.doc["tasks"].is_array())) why = "it has no \"tasks\" list: it is not a jobs record";
  if (!why.empty())
    return unreadableError(file, why, "its jobs' states are not recorded over it: restore it from a copy, or remove it");
  return readAs<ClusterJobs>(doc.doc);
}

Status recordClusterTasks(const fs::path& folder, const std::vector<ClusterTask>& tasks) {
  auto read = readClusterJobs(folder);
  if (!read.ok()) return read.error();
  ClusterJobs jobs = std::move(*read);
  for (const ClusterTask& t : tasks) {
    auto it = std::find_if(jobs.tasks.begin(), jobs.tasks.end(), [&](const ClusterTask& x) { return x.run_dir == t.run_dir; });
    if (it != jobs.tasks.end()) *it = t;
    else jobs.tasks.push_back(t);
  }
  nlohmann::json doc = nlohmann::json::object();
  fieldsToJson(jobs, doc);
  return writeFileAtomic(folder / kClusterJobsFile, doc.dump(2) + "\n");
}

std::optional<ClusterTask> clusterTaskOf(const fs::path& runDir) {
  const fs::path dir = fs::absolute(runDir).lexically_normal();
  for (const fs::path& folder : {dir.parent_path() / kClusterArrayFolder, dir.parent_path().parent_path() / kClusterArrayFolder}) {
    std::error_code ec;
    if (!fs::is_regular_file(folder / kClusterJobsFile, ec)) continue;
    const auto jobs = readClusterJobs(folder);
    if (!jobs.ok()) continue;
    for (const ClusterTask& t : jobs->tasks)
      if (fs::path(t.run_dir).lexically_normal() == dir) return t;
  }
  return std::nullopt;
}

bool clusterStateActive(const std::string& state) {
  static const char* const kActive[] = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED"};
  return std::any_of(std::begin(kActive), std::end(kActive), [&](const char* s) { return state == s; });
}

}  // namespace wb::proto
