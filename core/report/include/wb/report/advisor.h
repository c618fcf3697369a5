#pragma once
// The advisor: plain-language verdicts on one run, from its step-time split, its events and its
// config, optionally against a reference run (the baseline, or the previous ladder step).
// Pure function; thresholds are the constants in advisor.cpp, each with its reason.
#include <string>
#include <vector>

#include "wb/report/compare.h"
#include "wb/report/run_record.h"

namespace wb::report {

enum class Severity { Info, Tip, Warning };
const char* severityName(Severity s);  // "info" | "tip" | "warning"

struct Verdict {
  std::string code;   // stable id: "data-bound", "fp16-skips", "sharding", ... (tests, UI icons)
  Severity severity = Severity::Info;
  std::string text;   // one sentence a person can act on
};

// Verdicts for `run` (metrics `m`). `reference`/`reference_m` may be null (no comparison verdicts).
std::vector<Verdict> advise(const RunRecord& run, const RunMetrics& m, const RunRecord* reference = nullptr,
                            const RunMetrics* reference_m = nullptr);

// The loader worker count the advisor and the ladder recommend: min(cores, 4), at least 1.
int recommendedWorkers(int cores);

}  // namespace wb::report
