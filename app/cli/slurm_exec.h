#pragma once
// A timing command (try, ladder, tune) sent to a Slurm cluster whole: this very command, its
// arguments as given less --executor and --sbatch-arg, runs as one job on one node, so both arms
// of every pair run there interleaved as they do here and no pair crosses nodes.
#include <filesystem>
#include <string>

#include "options.h"

namespace wb::cli {

// Runs the command as one job writing `out` (a folder the nodes see; checked first by a job);
// Slurm's files beside it in <out>.slurm/. Ctrl-C cancels the job and keeps what it wrote; a job
// Slurm ended (time limit, preemption, a lost node) is run once more and continues `out`; twice,
// it is reported with Slurm's reasons. The job's output is printed when it ends; its exit code.
int runOnSlurm(const ExecutorOptions& e, const std::filesystem::path& out, const std::string& command);

}  // namespace wb::cli
