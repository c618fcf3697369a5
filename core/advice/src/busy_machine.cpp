#include "wb/advice/busy_machine.h"

#include <algorithm>
#include <map>

#include "wb/common/sysinfo.h"
#include "wb/render/table.h"

namespace wb::advice {
using compare::Comparison;
using compare::ComparisonRow;
using compare::Contention;

namespace {

// Each process once, at the most it used in any run, busiest first; at most `most`.
std::vector<ProcessLoad> merged(const std::vector<ProcessLoad>& all, size_t most) {
  std::map<std::pair<int, std::string>, double> highest;
  for (const ProcessLoad& l : all) {
    double& h = highest[{l.pid, l.name}];
    h = std::max(h, l.cores);
  }
  std::vector<ProcessLoad> out;
  for (const auto& [who, cores] : highest) out.push_back({who.first, who.second, cores});
  std::sort(out.begin(), out.end(), [](const ProcessLoad& a, const ProcessLoad& b) { return a.cores > b.cores; });
  if (out.size() > most) out.resize(most);
  return out;
}

// "kill -STOP 812 901 (and kill -CONT 812 901 after)": what pauses them, when they are the user's.
std::string pauseCommand(const std::vector<ProcessLoad>& busiest) {
  std::string pids;
  for (const ProcessLoad& l : busiest) pids += " " + std::to_string(l.pid);
  return "kill -STOP" + pids + ", and kill -CONT" + pids + " after";
}

}  // namespace

BusyMachine busyMachineOf(const std::vector<const Contention*>& contentions) {
  BusyMachine b;
  std::vector<ProcessLoad> all;
  for (const Contention* c : contentions) {
    if (!c || !c->contended) continue;
    b.cores = std::max(b.cores, c->cores);
    if (c->shared) ++b.shared_runs, b.most_shared_cores = std::max(b.most_shared_cores, c->shared_cores.value_or(0));
    if (!c->byOthers()) continue;
    ++b.runs;
    b.most_other_cores = std::max(b.most_other_cores, c->other_load_cores.value_or(0));
    all.insert(all.end(), c->busiest_others.begin(), c->busiest_others.end());
  }
  b.busiest_others = merged(all, 3);
  return b;
}

BusyMachine busyMachineOf(const Comparison& comparison) {
  std::vector<const Contention*> all;
  for (const ComparisonRow& row : comparison.rows) all.push_back(&row.m.contention);
  return busyMachineOf(all);
}

std::string busyMachineLoad(const BusyMachine& busy) {
  std::string text = "other processes used ";
  if (busy.most_other_cores > 0)
    text += "up to " + fmtFixed(busy.most_other_cores, 1) +
            (busy.cores > 0 ? " of " + std::to_string(busy.cores) + " cores" : " cores");
  else
    text += "the CPU";
  const std::string who = describeLoads(busy.busiest_others);
  return who.empty() ? text : text + " (busiest: " + who + ")";
}

std::string busyMachineRemedy(const BusyMachine& busy) {
  std::string text = "To get verdicts: ";
  if (!busy.busiest_others.empty())
    text += "stop or pause those processes if they are yours (" + pauseCommand(busy.busiest_others) + "), ";
  return text + "run when the machine is idle, or on a cluster run it as a job with the node to itself (--executor slurm "
                "--sbatch-arg=--exclusive).";
}

// The runs that shared the cores with their own experiment's runs: no process to pause, only to run
// them one at a time.
std::string sharedCoresAdvice(const BusyMachine& busy) {
  if (busy.shared_runs == 0) return "";
  std::string beside;
  if (busy.most_shared_cores > 0)
    beside = " (up to " + fmtFixed(busy.most_shared_cores, 1) + (busy.cores > 0 ? " of " + std::to_string(busy.cores) : "") +
             " cores beside them)";
  return std::to_string(busy.shared_runs) + (busy.shared_runs == 1 ? " run" : " runs") +
         " shared the cores with their own experiment's other runs" + beside +
         ": their speedups are not shown. Runs side by side are each other's load, not this machine's; to compare "
         "their speed, run them one at a time (try --parallel-runs 1 --variant-parallel 1).";
}

std::string busyMachineAdvice(const BusyMachine& busy) {
  const std::string shared = sharedCoresAdvice(busy);
  if (busy.runs == 0) return shared;
  return std::to_string(busy.runs) + (busy.runs == 1 ? " run was" : " runs were") + " measured while " +
         busyMachineLoad(busy) + ": their speedups are not shown. A run's speed counts when other processes use under " +
         fmtFixed(kContendedOtherCores, 1) +
         " cores over it, and a pair's when both its runs were slowed alike (the same load, the same cores asked). " +
         busyMachineRemedy(busy) + (shared.empty() ? "" : " " + shared);
}

}  // namespace wb::advice
