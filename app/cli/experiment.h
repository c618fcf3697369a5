#pragma once
// What `run`, `worker` and `ladder` share: the experiment from --config/--set, and the stop flag
// that SIGINT/SIGTERM set (and pass on to a running launchRun).
#include <atomic>
#include <string>

#include "args.h"
#include "wb/common/config.h"
#include "wb/common/result.h"

namespace wb::cli {

// --config FILE (or `base`, a config.json, when given) then every --set KEY=VALUE, validated at
// once; errors name the file and fields.
Result<Config> resolveConfig(const Args& args, const std::string& base = "");

// Set by SIGINT/SIGTERM once installStopSignals() ran; SIGPIPE is ignored from then on.
std::atomic<bool>& stopFlag();
void installStopSignals();

}  // namespace wb::cli
