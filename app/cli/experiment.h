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
// once: every bad --set, unknown field, wrong type and bad value in one InvalidConfig error, one
// per line, naming the file and fields; malformed JSON gives file:line:column. Also refuses
// path options (see checkPathOptions) before anything is created.
Result<Config> resolveConfig(const Args& args, const std::string& base = "");

// InvalidConfig naming the option when --config, --run-dir, --runs-root or --resume (those
// given) is not valid UTF-8 (wb::requireUtf8Path).
Status checkPathOptions(const Args& args);

// Set by SIGINT/SIGTERM once installStopSignals() ran; SIGPIPE is ignored from then on.
std::atomic<bool>& stopFlag();
void installStopSignals();

}  // namespace wb::cli
