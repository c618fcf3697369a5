#pragma once
// Which loader worker count the workbench recommends, one home for the advisor's data-bound
// verdict and the ladder's workers step: the stored worker probe's measured count when there is
// one (core/probe makes this summary of it: wb::probe::workersAdvice), else the rule of thumb
// min(cores, 4), at least 1. The advisor reads this summary, never the probe's record, so the
// probe's record, rule and tables live in core/probe above this library.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "wb/records/run_record.h"

namespace wb::advice {

inline constexpr int kRuleOfThumbMaxWorkers = 4;
int ruleOfThumbWorkers(int cores);

struct WorkersAdvice {
  int workers = 1;
  bool measured = false;             // from a stored probe (else the rule of thumb)
  std::string date;                  // the probe's date ("2026-12-01 08:40 UTC"); "" without one
  bool contended = false;            // the probe was measured under contention
  bool data_not_bottleneck = false;  // the probe found the loader is not what a step waits for
  // "the worker probe of 2026-12-01 08:40 UTC" (", measured under contention" when it was), or
  // "the rule of thumb min(cores, 4)".
  std::string source() const;
};
WorkersAdvice ruleOfThumbAdvice(int cores);

// A capabilities document carries the advice as speedups.workers.probe ({recommended, date,
// contended, data_not_bottleneck}), where planLadder's workers step and the window read it.
// attachWorkersAdvice writes it (nothing for advice that was not measured); workersAdvice reads
// it, with the document's "cores" for the rule of thumb.
void attachWorkersAdvice(nlohmann::json& capabilities, const WorkersAdvice& advice);
WorkersAdvice workersAdvice(const nlohmann::json& capabilities);

// The advice for each run a report shows (its experiment on the machine it ran on); a report given
// none uses ruleOfThumbFor.
using WorkersAdviceFor = std::function<WorkersAdvice(const records::RunRecord& run)>;
WorkersAdvice ruleOfThumbFor(const records::RunRecord& run);

}  // namespace wb::advice
