#pragma once
// The advisor: plain-language verdicts on one run, from its step-time split, its events and its
// config, optionally against a reference run (the baseline, or the previous ladder step).
// Pure function; thresholds are the constants in advisor.cpp, each with its reason.
#include <string>
#include <vector>

#include "wb/compare/compare.h"
#include "wb/advice/workers_advice.h"
#include "wb/records/run_record.h"
#include "wb/stats/stats.h"

namespace wb::advice {

enum class Severity { Info, Tip, Warning };
const char* severityName(Severity s);  // "info" | "tip" | "warning"

struct Advice {      // one piece of advice (the speedup verdicts are wb/stats/stats.h's Verdict)
  std::string code;   // stable id: "data-bound", "fp16-skips", "sharding", ... (tests, UI icons)
  Severity severity = Severity::Info;
  std::string text;   // one sentence a person can act on
};

// Verdicts for `run` (metrics `m`). `reference`/`reference_m` may be null (no comparison verdicts).
// `workers`: the worker advice for the run's experiment on its machine (core/probe's
// storedWorkersAdvice), or null for the rule of thumb; the data-bound verdict recommends a
// measured count with its date (and says when the probe found the data path is not the
// bottleneck), else the rule of thumb and how to measure it.
// `effect`: the measured speedup of this run's configuration over the reference's (to target,
// with its interval: compareRuns' row.target, or a paired runner's estimate). The advisor speaks
// of a speed effect only when it clears the noise (Faster / Slower); otherwise it says "within
// noise". Without one, the single pair's wall-time ratio is used: no interval, so within noise;
// an estimate without a point (a run that gives no speedup) gives no speed advice.
std::vector<Advice> advise(const records::RunRecord& run, const compare::RunMetrics& m, const records::RunRecord* reference = nullptr,
                           const compare::RunMetrics* reference_m = nullptr, const WorkersAdvice* workers = nullptr,
                           const stats::SpeedupEstimate* effect = nullptr);

}  // namespace wb::advice
