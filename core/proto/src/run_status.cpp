#include "wb/proto/run_status.h"

namespace wb::proto {
namespace {

struct StatusExit {
  const char* status;
  int code;
};
// The first status of a code is the one the code stands for.
constexpr StatusExit kStatusExits[] = {{kStatusOk, kExitOk},
                                       {kStatusEarlyStopped, kExitOk},
                                       {kStatusDiverged, kExitDiverged},
                                       {kStatusCancelled, kExitCancelled},
                                       {kStatusFailed, kExitFailed}};

}  // namespace

int exitCodeForStatus(const std::string& status, int failedCode) {
  if (status != kStatusFailed)
    for (const auto& s : kStatusExits)
      if (status == s.status) return s.code;
  return failedCode == kExitUsage || failedCode == kExitData ? failedCode : kExitFailed;
}

const char* statusForExitCode(int code) {
  for (const auto& s : kStatusExits)
    if (code == s.code) return s.status;
  return kStatusFailed;
}

}  // namespace wb::proto
