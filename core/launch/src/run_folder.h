#pragma once
// The launcher's first step: the run folder a launch writes into, chosen, created, locked and
// checked (a resume the ranks would refuse, or a folder that holds a finished run, is refused
// before anything in it changes), with config.json in place. Internal to core/launch.
#include <string>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/launch/launcher.h"
#include "wb/proto/rundir.h"

namespace wb::launch::detail {

struct PreparedRun {
  proto::RunDir run;
  proto::RunLock lock;           // held until the run's end is written
  nlohmann::json resolved;       // the config, as config.json holds it
  std::string resumeCheckpoint;  // what the ranks continue from; empty for a new run
  nlohmann::json configChanges = nlohmann::json::array();  // "field: before -> after" of a resume's --set
  std::string fineTunedFrom;     // a --fine-tune resume: the data.dataset its weights were trained on
};

// Errors (InvalidConfig, Checkpoint, Io) name the folder or file and the fix; on an error the
// folder is as it was, except that a new folder may have been created empty.
Result<PreparedRun> prepareRunFolder(const Config& config, const LaunchOptions& options);

}  // namespace wb::launch::detail
