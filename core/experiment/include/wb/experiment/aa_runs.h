#pragma once
// The runs of an A/A calibration (`workbench-cli noise`): one configuration `runs` times, each a
// whole `workbench-cli run` with its own seed (the configuration's seed + i, so the spread of the
// best accuracy is measured too) into <out>/aa-<i>. Here they run one after another (their timing
// is what is measured); with `run_many` set they go there at once (a cluster's job array:
// wb/experiment/runs_on_slurm.h). A run that finished ok in an earlier call is kept; one cut or
// failed before is run again in a fresh folder (aa-<i>-r2, ...), the old one left as it was.
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/experiment/reference_runs.h"

namespace wb::experiment {

struct AaRunsOptions {
  Config config;
  std::filesystem::path out;
  int runs = 6;
  std::string cli_path;            // workbench-cli
  RunMany run_many;                // set: all at once there, instead of one after another here
  const std::atomic<bool>* stop = nullptr;
  std::FILE* log = stderr;
};

// The runs' folders, in order. Errors: Cancelled (stopped; what finished is kept), InvalidConfig
// (a run refused the configuration), Io (a run that did not end ok, named with its folder).
Result<std::vector<std::string>> runAaCalibration(const AaRunsOptions& options);

}  // namespace wb::experiment
