#include "wb/parallel/slurm.h"
#include "wb/common/format.h"

#include <cstdio>
#include <cstdlib>

namespace wb::parallel {

std::string slurmJobOf(const std::function<const char*(const char*)>& getenv) {
  const char* job = getenv("SLURM_JOB_ID");
  if (job == nullptr || *job == '\0') return "";
  std::string id(job);
  for (char c : id)
    if (c < '0' || c > '9') return "";  // a job id is a number; anything else is not asked about
  const char* step = getenv("SLURM_STEP_ID");
  if (step != nullptr && *step != '\0') id += std::string(".") + step;
  return id;
}


std::string slurmEndingFrom(const std::string& job, const std::string& text) {
  const std::string state = slurmField(text, "JobState"), reason = slurmField(text, "Reason");
  if (state.empty())
    return "Slurm job " + job + ": scontrol did not say its state (" + text.substr(0, 200) + ")";
  const std::string said = " (JobState=" + state + ", Reason=" + reason + ")";
  const std::string limit = slurmField(text, "TimeLimit");
  if (state == "TIMEOUT" || reason == "TimeLimit")
    return "Slurm ended job " + job + " at its time limit " + limit + said +
           ": ask for more time (sbatch/srun --time) or resume from the run's last checkpoint";
  if (state == "NODE_FAIL" || reason == "NodeDown" || reason == "NodeFail")
    return "Slurm ended job " + job + " because a node failed" + said + ": resume from the run's last checkpoint";
  if (state == "PREEMPTED" || reason.find("Preempt") != std::string::npos)
    return "Slurm preempted job " + job + said + ": resume from the run's last checkpoint";
  if (state == "RUNNING")
    return "the stop signal did not end Slurm job " + job + said +
           ": it came to this step alone (scancel JOB.STEP, or kill from outside Slurm)";
  return "Slurm cancelled job " + job + said + ": scancel (or preemption); resume from the run's last checkpoint";
}

std::string slurmEnding() {
  const std::string id = slurmJobOf([](const char* n) { return std::getenv(n); });
  if (id.empty()) return "";
  const std::string job = id.substr(0, id.find('.'));
  FILE* p = ::popen(("timeout 5 scontrol show job -o " + job + " 2>&1").c_str(), "r");
  if (p == nullptr) return "under Slurm job " + id + "; scontrol could not be run to say why it ended";
  std::string text;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  const int rc = ::pclose(p);
  if (rc != 0) return "under Slurm job " + id + "; scontrol could not say why it ended: " + text.substr(0, 200);
  return slurmEndingFrom(id, text);
}

}  // namespace wb::parallel
