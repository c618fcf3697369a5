#pragma once
// The early-stopping rule lives in core/common (wb/common/early_stopping.h), one home for the
// trainer and the what-if of core/report; this name keeps the trainer's include working.
#include "wb/common/early_stopping.h"

namespace wb::train {
using wb::EarlyStopping;
using wb::EarlyStoppingDecision;
}  // namespace wb::train
