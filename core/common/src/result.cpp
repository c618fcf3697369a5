#include "wb/common/result.h"

#include "wb/common/exit_codes.h"

namespace wb {

int exitCodeFor(Errc code) {
  switch (code) {
    case Errc::InvalidConfig: return kExitUsage;
    case Errc::Data: return kExitData;
    case Errc::Diverged: return kExitDiverged;
    case Errc::Cancelled: return kExitCancelled;
    default: return kExitFailed;
  }
}

const char* errcName(Errc code) {
  switch (code) {
    case Errc::InvalidConfig: return "invalid_config";
    case Errc::Data: return "data";
    case Errc::Diverged: return "diverged";
    case Errc::Cancelled: return "cancelled";
    case Errc::Io: return "io";
    case Errc::Model: return "model";
    case Errc::Checkpoint: return "checkpoint";
    case Errc::Distributed: return "distributed";
    case Errc::Internal: return "internal";
  }
  return "internal";
}

}  // namespace wb
