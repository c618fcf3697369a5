#pragma once
// Jobs on a Slurm cluster through its own clients (sbatch, sinfo, scontrol, scancel): what an
// experiment sent to the cluster builds on. The checks run before anything is submitted, so bad
// input is one error naming what is wrong and what to do; Slurm's refusals are quoted.
// The clients find the cluster as they always do (SLURM_CONF or /etc/slurm). Blocking calls,
// each bounded by a timeout; any thread.
#include <filesystem>
#include <string>
#include <vector>

#include "wb/common/result.h"

namespace wb::launch::slurm {

// One job as slurmctld reports it.
struct JobState {
  std::string id;
  std::string state;   // PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED, ...
  std::string reason;  // Slurm's Reason (None, TimeLimit, Resources, PartitionConfig, ...)
  std::string exit_code;  // "0:0": the batch script's code and the signal that ended it

  bool ended() const;     // no longer pending, running, completing, suspended or configuring
  bool finished() const;  // COMPLETED
  // Slurm itself ended it (a time limit, preemption, a failed node, a cancel): its result does not count.
  bool endedBySlurm() const;
  // Pending for a reason that never clears by waiting (the partition or the request cannot fit).
  bool cannotStart() const;
  std::string describe() const;  // "job 12: TIMEOUT (Reason=TimeLimit)"
};

// sbatch, sinfo, scontrol and scancel are on PATH (else: what to install).
Status clientsPresent();

// The partition exists (else the error lists the cluster's partitions).
Status partitionExists(const std::string& partition);

// The partition named in sbatch arguments ("-p X", "--partition X", "--partition=X", "-pX"); "" when none.
std::string partitionOf(const std::vector<std::string>& sbatchArgs);

// Submits `script` with `sbatchArgs` (passed through: partition, account, time, gres, ...) and
// the script's own `scriptArgs`, working in `workdir`: the job id, or sbatch's refusal quoted.
Result<std::string> submit(const std::filesystem::path& script, const std::vector<std::string>& sbatchArgs,
                           const std::vector<std::string>& scriptArgs, const std::filesystem::path& workdir);

// The job's state from scontrol (an ended job stays listed for the cluster's MinJobAge).
Result<JobState> jobState(const std::string& id);
JobState parseJobState(const std::string& id, const std::string& scontrolLine);

// Waits until the job ended (polling every `pollS`), at most `timeoutS`.
Result<JobState> waitForJob(const std::string& id, double timeoutS, double pollS = 0.5);

// scancel on each id; ended ones are no error.
Status cancel(const std::vector<std::string>& ids);

// A first job writes a file into `folder` and it is read back here: the nodes see this folder
// (run folders written there by jobs come back). Fails naming the folder and the job's output.
Status folderVisible(const std::filesystem::path& folder, const std::vector<std::string>& sbatchArgs,
                     double timeoutS = 300);

// Everything an experiment sent to the cluster needs, checked before any run goes: the clients,
// the partition the sbatch arguments name, and that the nodes write `folder` (a first job).
Status checkCluster(const std::filesystem::path& folder, const std::vector<std::string>& sbatchArgs);

}  // namespace wb::launch::slurm
