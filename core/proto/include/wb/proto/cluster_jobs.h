#pragma once
// Which cluster job runs each run of an experiment sent to Slurm as a job array, and in what
// state: <array folder>/jobs.json, written by the array's submitter as Slurm's states change
// (wb/launch/slurm_array.h) and read by the window, which shows each run's job id and state
// (pending, running, done, ended by Slurm with its reason) beside the run.
//
// Where it is: the array's folder sits beside the runs it runs (<out>/slurm for <out>/aa-N) or
// beside their parent folder (<store>/<key>/slurm for <store>/<key>/runs/seed-N), so a run's task
// is found from the run's folder alone (clusterTaskOf). One record per folder, merged: a task
// submitted again (a rerun, a later array) replaces the entry of its run folder.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"

namespace wb::proto {

inline constexpr const char* kClusterJobsFile = "jobs.json";
inline constexpr const char* kClusterArrayFolder = "slurm";  // the array's folder's name, beside the runs

struct ClusterTask {
  std::string run_dir;  // absolute
  std::string job;      // Slurm's id of the task: "<array>_<index>"
  std::string state;    // Slurm's word: PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, NODE_FAIL, ...
  std::string reason;   // Slurm's Reason ("Priority", "Resources", "TimeLimit", ...), or ""
  std::string updated_at;  // UTC, ISO 8601
};

struct ClusterJobs {
  std::vector<ClusterTask> tasks;
  nlohmann::json unknown;
};

// Merges `tasks` into <folder>/jobs.json (by run folder) and writes it atomically. A jobs.json that
// cannot be read (cut mid-file, emptied, no "tasks" list: another record) is left as it is and
// named: InvalidConfig "<file> is unreadable: <why>; ..." (its tasks would be lost in a rewrite).
Status recordClusterTasks(const std::filesystem::path& folder, const std::vector<ClusterTask>& tasks);
// The folder's tasks: none when it has no jobs.json; the refusal above when it cannot be read.
Result<ClusterJobs> readClusterJobs(const std::filesystem::path& folder);
// The task that runs `runDir`, from the array folder beside it or beside its parent; nullopt when
// none says so (an unreadable jobs.json says nothing).
std::optional<ClusterTask> clusterTaskOf(const std::filesystem::path& runDir);
// Whether Slurm's state is one the run may still be waiting in or running (PENDING, RUNNING, ...).
bool clusterStateActive(const std::string& state);

}  // namespace wb::proto
