#pragma once
// Shared inside core/tune/src only.
#include "wb/report/run_record.h"
#include "wb/tune/tune.h"

namespace wb::tune {

void readTrialFigures(const report::RunRecord& r, proto::TuneTrial& t);

// The finals: each finalist's pairs against the config as given, the best of them and the ones
// that cannot be told from it, into r (finals, best, best_label, cannot_tell, target_acc, note).
void judgeFinals(const experiment::Outcome& o, const report::Sequential& seq, proto::TuneRecord& r);

}  // namespace wb::tune
