#pragma once
// pairs.json (private to the runner): {version, command, plan {reference, variants: [{key, label,
// config}]}, pairs [{key, pair, variant_first, reference_dir, variant_dir, seed}] (folders relative to
// out), status (running | ok | failed | cancelled), cancelled_at, lone_reference}.
#include <filesystem>
#include <string>
#include <vector>

#include "wb/experiment/paired_runner.h"

namespace wb::experiment {

struct PairsState {
  Plan plan;
  std::string command;
  std::vector<PairRecord> pairs;
  std::string status = "running";
  std::string cancelled_at;
  std::string lone_reference;   // the reference's folder when the plan has no variants
};

// Atomic. Errors name the file.
Status savePairs(const std::filesystem::path& out, const PairsState& state);
// The finished pairs of `plan` in out/pairs.json; InvalidConfig naming what differs when the file
// holds another plan, and naming the file when it is unreadable (cut mid-file, emptied, not a
// record: "<file> is unreadable: <why>; ..."), with what to do. Nothing is rebuilt over it.
Result<std::vector<PairRecord>> loadPairs(const std::filesystem::path& out, const Plan& plan, std::string* lone_reference);

}  // namespace wb::experiment
