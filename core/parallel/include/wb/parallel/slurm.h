#pragma once
// Slurm's word on why a rank's job is ending. A rank stopped by SIGTERM cannot tell a scancel from
// a time limit or a lost node; slurmctld can (`scontrol show job`: JobState and Reason), and that
// is what the run's error quotes. Std-only; no torch.
#include <functional>
#include <string>

namespace wb::parallel {

// SLURM_JOB_ID (and, under srun, SLURM_STEP_ID) from a lookup; empty when not under Slurm.
std::string slurmJobOf(const std::function<const char*(const char*)>& getenv);


// Slurm's ending of `job` in words, from its `scontrol show job -o` text: a time limit, a scancel
// or preemption, a failed node, or (job still RUNNING) a signal that did not come from Slurm.
std::string slurmEndingFrom(const std::string& job, const std::string& scontrolText);

// The same for this process's job, asking slurmctld (scontrol, at most 5 s); "" when this process
// is not under Slurm.
std::string slurmEnding();

}  // namespace wb::parallel
