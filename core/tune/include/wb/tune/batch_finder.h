#pragma once
// `workbench-cli tune batch` (and tune's batch dimension): the per-rank batch size with the most
// steady training throughput on this machine, not the largest that fits. It steps up from the
// config's batch (×1.5 and ×4/3 in turn: 64, 96, 128, 192, 256, ...; multiples of 8), one short
// whole run a size, and stops when two sizes in a row gain no more than the noise band over the
// fastest so far, when the next size's memory (peak RSS on the CPU, CUDA reserved on a GPU; per
// rank, extrapolated from the sizes before) would pass the free memory less the margin, or when a
// trial fails: an allocation failure is recorded as the limit, never ends the search. It returns
// only a size it ran: the smallest within the noise of the fastest (the least memory and the
// fewest steps lost to a larger batch's accuracy). That size trains at the lr scaled by the rule
// (optim.lr_base_batch = the base, warmed up); with an accuracy check, one pair of full runs
// (the config as given, then the chosen) says whether the accuracy held.
//
// Folder: batch.json (wb/proto/tune_record.h's TuneBatch) after every trial, runs/b<size>/, and
// accuracy/ (the pair). A cut search continues: finished sizes are kept.
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/experiment/paired_runner.h"
#include "wb/proto/tune_record.h"

namespace wb::tune {

struct BatchOptions {
  Config base;
  std::filesystem::path out;
  experiment::Hooks hooks;              // the runner's: workbench-cli, stop flag, events, progress lines
  int64_t train_images = 0;
  int64_t trial_samples = 0;            // training images a trial runs (0: 10 % of an epoch)
  double band = 0.05;                   // the noise band: a gain within it is no gain
  double margin = 0.1;                  // share of the free memory kept free
  std::optional<int64_t> memory_free;   // bytes free at the start (host MemAvailable, or the GPU's)
  std::string memory_kind = "host RSS";
  int max_batch = 8192;
  std::string lr_rule = "linear";       // linear | sqrt | none
  bool check_accuracy = false;
  experiment::Policy policy;            // the accuracy check's pair (target)
  experiment::UserCommand user_command; // set: each trial is the user's command ({train.batch_size})
};

// The sizes it steps through from `base` up to `max` (base first).
std::vector<int> batchSizes(int base, int max);

// Whether a failed trial's error reads as running out of memory (std::bad_alloc, CUDA "out of
// memory", a rank killed by SIGKILL, the OOM killer's usual signal).
bool looksLikeAllocationFailure(const std::string& error);

struct BatchOutcome {
  proto::TuneBatch record;
  Config chosen;                        // base with the chosen size and its lr scaling
  bool cancelled = false;
};

// With --command: the command must take {train.max_steps} (a trial trains a fraction of an
// epoch); InvalidConfig naming `who` (tune, tune batch) and what to add otherwise. Unset: ok.
Status commandTakesTrials(const experiment::UserCommand& command, const std::string& who);

// Runs (or continues) the finder in options.out. Io when the folder cannot be written.
Result<BatchOutcome> findBatch(const BatchOptions& options);

// The config at batch `b`: the lr scaled by `rule` against the base's batch (lr_base_batch), warmed up.
Config withBatch(const Config& base, int b, const std::string& rule);

}  // namespace wb::tune
