#pragma once
// A busy machine in words a user can act on: how much other load the runs met, from which
// processes, and what it takes for their speedups to count (the rule is wb::isContended and, for
// a pair, compare::slowedAlike).
#include <string>
#include <vector>

#include "wb/common/processes.h"
#include "wb/compare/compare.h"

namespace wb::advice {

struct BusyMachine {
  int runs = 0;                             // runs measured under other processes' load
  double most_other_cores = 0;              // the highest other load among them
  int cores = 0;                            // the machine's logical cores (0: unknown)
  std::vector<ProcessLoad> busiest_others;  // over all of them, each process at its highest, busiest first
  int shared_runs = 0;                      // runs beside their own experiment's other runs (never other load)
  double most_shared_cores = 0;             // the most cores those took from one of them
};

// What the contended ones among `contentions` met.
BusyMachine busyMachineOf(const std::vector<const compare::Contention*>& contentions);
// ... among a comparison's rows (the baseline's included).
BusyMachine busyMachineOf(const compare::Comparison& comparison);

// "other processes used up to 1.4 of 2 cores (busiest: stress-ng (pid 812) 1.0 cores)".
std::string busyMachineLoad(const BusyMachine& busy);
// "To get verdicts: stop or pause those processes if they are yours (kill -STOP 812, …), run when
// the machine is idle, or …".
std::string busyMachineRemedy(const BusyMachine& busy);
// "2 runs were measured while <load>: their speedups are not shown. A run's speed counts when … <remedy>", then
// "2 runs shared the cores with their own experiment's other runs (…): … one at a time …"; "" when no run was either.
std::string busyMachineAdvice(const BusyMachine& busy);

}  // namespace wb::advice
