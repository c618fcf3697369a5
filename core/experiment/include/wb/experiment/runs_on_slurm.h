#pragma once
// Runs whose timing does not matter (an experiment's reference runs) sent to a Slurm cluster as
// one job array (wb/launch/slurm_array.h): each a `workbench-cli run --config <its config>
// --run-dir <its folder>`, as many at once as the cluster gives. Each config is written into its
// run's folder first (so the window lists the run while it waits, with its job's state from
// `array.folder`'s jobs.json: wb/proto/cluster_jobs.h); the folders must be on a filesystem the
// nodes share. A run
// Slurm ended (time limit, preemption, a lost node) is rerun once in a fresh folder; a second such
// end is that run's problem, with Slurm's reason, and its status "failed".
#include <string>

#include "wb/experiment/reference_runs.h"
#include "wb/launch/slurm_array.h"

namespace wb::experiment {

RunMany runManyOnSlurm(launch::slurm::ArrayOptions array, std::string cli_path);

}  // namespace wb::experiment
