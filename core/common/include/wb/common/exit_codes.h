#pragma once
// The documented process exit codes (docs/runs.md "Exit codes"), one table for every layer:
// exitCodeFor (wb/common/result.h) maps error codes to them, and wb/proto/run_status.h maps the
// run statuses to them and back.
namespace wb {

inline constexpr int kExitOk = 0;          // ok, or early-stopped
inline constexpr int kExitFailed = 1;      // anything else
inline constexpr int kExitUsage = 2;       // bad config or usage
inline constexpr int kExitData = 3;        // data error
inline constexpr int kExitDiverged = 4;
inline constexpr int kExitCancelled = 130;

}  // namespace wb
