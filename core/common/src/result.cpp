#include "wb/common/result.h"

namespace wb {

int exitCodeFor(Errc code) {
  switch (code) {
    case Errc::InvalidConfig: return 2;
    case Errc::Data: return 3;
    case Errc::Diverged: return 4;
    case Errc::Cancelled: return 130;
    default: return 1;
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
