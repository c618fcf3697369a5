#pragma once
// Runs whose timing does not matter (reference and convergence runs, accuracy seeds) sent to a
// Slurm cluster as one job array: as many at once as the cluster gives. Each task is one command
// writing one run folder on a filesystem the nodes share. A task Slurm ended (time limit,
// preemption, a failed node, a cancel not ours) is rerun once into a fresh folder, its first
// folder kept; a second such end is reported with Slurm's reason, never counted as a result.
// A stop request cancels the array's tasks (scancel) and keeps what finished.
// Blocking; the caller's thread.
#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "wb/common/result.h"

namespace wb::launch::slurm {

struct ArrayTask {
  std::vector<std::string> argv;  // the command; "{run_dir}" in an argument becomes the task's folder
  std::filesystem::path run_dir;  // where its run is written
};

struct TaskEnd {
  std::string state;                 // Slurm's last word: COMPLETED, FAILED, TIMEOUT, NODE_FAIL, ... or "not run"
  std::string reason;                // Slurm's Reason for it
  std::filesystem::path run_dir;     // the folder of its last attempt (a rerun's own)
  std::string exit_code;              // Slurm's ExitCode of its last attempt: "code:signal"
  std::vector<std::string> slurm_ended;  // each attempt Slurm ended, in words ("job 12_3: TIMEOUT (Reason=TimeLimit)")
  bool finished = false;             // the command ran to its end (exit 0 or not: its run folder says)
};

struct ArrayOptions {
  std::vector<std::string> sbatch_args;  // passed through: partition, account, time, gres, ...
  std::filesystem::path folder;          // the array's script and Slurm's logs (slurm-<job>_<task>.out)
  std::filesystem::path workdir;         // the tasks' working folder (default: `folder`)
  bool rerun_in_fresh_folder = true;     // false: a rerun is the same command (one that continues its folder)
  std::string job_name = "workbench";
  int max_at_once = 0;                   // 0: as many as the cluster gives (sbatch --array=0-N%max otherwise)
  const std::atomic<bool>* stop = nullptr;
  double poll_s = 1.0;
  double timeout_s = 7 * 24 * 3600.0;
};

// The bash script of an array whose task i runs tasks[i] (exported for tests and for the user).
std::string arrayScript(const std::vector<ArrayTask>& tasks);

// Submits the tasks as an array and waits for every one; one TaskEnd per task, in order.
// A stop request: the tasks are cancelled and the result is Errc::Cancelled naming how many finished.
Result<std::vector<TaskEnd>> runArray(const std::vector<ArrayTask>& tasks, const ArrayOptions& o);

}  // namespace wb::launch::slurm
