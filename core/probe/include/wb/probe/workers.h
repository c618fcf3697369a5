#pragma once
// The worker-count probe: how many loader workers this experiment wants on this machine.
//   (a) the loader alone, 0 workers: the real dataset and transforms, no model;
//   (b) the training step alone: the real model and optimiser on one cached batch, no loading;
//   (c) each candidate worker count for a bounded few seconds on the real experiment (a fresh
//       loader with N workers feeding real training steps), after a short warm-up, in
//       interleaved rounds (every count once a round): at least min_rounds, then more until the
//       choice is settled (ProbeResult::settled) or max_rounds;
// then the recommendation (recommendWorkers in wb/probe/record.h: the smallest count the fastest
// is not clearly faster than, judged against the rounds' own noise). The model keeps training
// across the candidates (its weights do not change what a step costs); nothing is written by
// probeWorkers: storing it (storeProbe) is the caller's choice. The record, rule, storage, table
// and chart are wb/probe/record.h; `workbench-cli probe workers` is option parsing over these.
//
// One process, one rank (the workers setting is per rank). Threads: intra-op threads as the
// trainer picks them (train.threads, or wb::train::defaultThreads). On CUDA the device is
// synchronised at the end of each timed stretch, so step times include the kernels.
// Errors: the trainer's (InvalidConfig for a config this machine cannot run, Data, Model);
// Cancelled when `stop` is set.
#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include <nlohmann/json.hpp>

#include "wb/probe/record.h"

namespace wb::probe {

struct WorkersProbeOptions {
  Config config;
  std::vector<int> candidates;  // empty: defaultCandidates(cores)
  double seconds = 3.0;         // per candidate in two rounds: each round times each count for half of
                                // it; (a) and (b) take half of it each
  int min_rounds = 2, max_rounds = 4;  // interleaved rounds (max_rounds ≥ min_rounds ≥ 1)
  std::function<void(const std::string&)> progress;  // one line per phase (may be null)
  const std::atomic<bool>* stop = nullptr;
};

// 0, 1, 2, 4, and the core count when it is above 4 (at most 8).
std::vector<int> defaultCandidates(int cores);

Result<ProbeResult> probeWorkers(const WorkersProbeOptions& options);

}  // namespace wb::probe
