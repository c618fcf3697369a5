#pragma once
// The one table of run status <-> process exit code (docs/runs.md "Exit codes"), for the worker, the
// launcher, the CLI and the window alike.
#include <string>

#include "wb/common/exit_codes.h"
#include "wb/proto/events.h"

namespace wb::proto {

// ok and early-stopped exit 0, diverged 4, cancelled 130, failed 1 (an unknown status too),
// except that a failed run keeps the 2 (bad config) or 3 (data error) of the rank that failed.
int exitCodeForStatus(const std::string& status, int failedCode = kExitFailed);
// The status an exit code stands for: 0 ok, 4 diverged, 130 cancelled, anything else failed.
const char* statusForExitCode(int code);
// An exit code that is a run's outcome (ok, diverged, cancelled), not a failure of its process.
inline bool isOutcomeExitCode(int code) { return std::string(statusForExitCode(code)) != kStatusFailed; }

}  // namespace wb::proto
