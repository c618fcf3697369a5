#pragma once
// Shared inside core/tune/src only.
#include "wb/records/run_record.h"
#include "wb/tune/tune.h"

namespace wb::tune {

void readTrialFigures(const records::RunRecord& r, proto::TuneTrial& t);

// The finals: each finalist's pairs against the config as given, the best of them and the ones
// that cannot be told from it, into r (finals, best, best_label, cannot_tell, target_acc, note).
void judgeFinals(const experiment::Outcome& o, const stats::Sequential& seq, proto::TuneRecord& r);

// A finalist measured by parts: its try's record (try.json), or why the try failed.
struct FinalistTry {
  std::string id, label, dir;  // dir: the try's folder, relative to the search's
  nlohmann::json doc;          // try.json by parts; null when it failed
  std::string error;
};
// The finals by parts: each finalist's composed time to target against the config as given (its
// try), the best of them, and those that cannot be told from it (the two composed estimates'
// ratio, their log standard errors added: they share the reference runs, so this is wide, never
// narrow); into r as judgeFinals.
void judgeFinalsByParts(const std::vector<FinalistTry>& tries, double minEffect, proto::TuneRecord& r);

// A finalist's try by parts against the config as given, in out/finals/<id>.
experiment::TryOptions finalistTryOptions(const TuneOptions& o, const std::string& id, const std::string& label,
                                          const Config& config);
// Runs (or continues) it. Errors: Cancelled, InvalidConfig (a reference folder of another
// experiment); any other failure is the finalist's (FinalistTry::error).
Result<FinalistTry> runFinalistTry(const TuneOptions& o, const experiment::TryOptions& t, const std::string& id);

}  // namespace wb::tune
