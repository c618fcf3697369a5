#pragma once
// A timing command (try, ladder, tune) sent to a Slurm cluster: this very command, its arguments
// as given less --executor and --sbatch-arg, runs as one job on one node, so both arms of every
// pair run there interleaved as they do here and no pair crosses nodes; by parts, the reference
// runs it needs go before it as a job array.
#include <filesystem>
#include <string>

#include "command_setup.h"
#include "options.h"
#include "wb/common/config.h"

namespace wb::cli {

// Runs the command as one job writing `out` (a folder the nodes see; checked first by a job);
// Slurm's files beside it in <out>.slurm/. Ctrl-C cancels the job and keeps what it wrote; a job
// Slurm ended (time limit, preemption, a lost node) is run once more and continues `out`; twice,
// it is reported with Slurm's reasons. The job's output is printed when it ends; its exit code.
int runOnSlurm(const ExecutorOptions& e, const std::filesystem::path& out, const std::string& command);

// An experiment by parts sent to the cluster: the baseline's reference runs (wb/experiment/
// reference_runs.h) go first, as one job array, as many at once as the cluster gives; they need no
// quiet node. The experiment's own job then finds them in the store and only measures. Those the
// store already holds are not run again. 0, or the exit code that stops the command (the error said).
// The by-parts options of a command; inside the job --executor slurm sent (--executor slurm-job),
// a variant's runs to the target after its first go back to the cluster as one job array, with
// the same --sbatch-arg (their timing does not count; the first's, on the job's node, does).
experiment::ComposedOptions composedFor(const ByPartsOptions& parts, const ExecutorOptions& e);

int referencesOnSlurm(const ExecutorOptions& e, const Config& baseline, const ByPartsOptions& parts,
                      const std::string& command);

}  // namespace wb::cli
