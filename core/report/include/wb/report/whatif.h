#pragma once
// The early-stopping what-if: from a finished run's validation curve (its `eval` events) and
// timing (its `epoch` events), without training again, what each early-stopping setting would
// have done. Each (patience, min_delta) replays the evaluations through the trainer's own rule
// (wb/common/early_stopping.h) with the run's monitor, mode, check_finite and stopping
// threshold. Values only; pure functions of a RunRecord.
//
// Definitions (every view shows the same):
//  - stops after epoch E: the evaluation at which the rule asks to stop. patience 0 is "off":
//    the run trains every recorded epoch; it has one row, and its best epoch is the plain best
//    (the trainer keeps best.pt without min_delta then).
//  - best epoch: the rule's best (an improvement by more than min_delta), what best.pt holds.
//    A run that stops ends with those weights (the trainer restores best.pt); one that does not
//    stop ends with its last epoch's weights.
//  - wall saved: rank 0's `t` at the end of the last recorded epoch minus its `t` at the end of
//    epoch E (the `epoch` event, written after the evaluation; else the `eval` event): the
//    training, evaluation and checkpoints of the epochs it would not have run. As a share of
//    the run's wall time (rank 0's last `t`).
//  - A run that itself stopped early, or did not finish, recorded only its first epochs: a
//    setting that does not stop within them says "not within the N recorded epochs" (what it
//    would have done later is unknown).
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/records/run_record.h"
#include "wb/render/table.h"

namespace wb::report {

struct WhatIfOptions {
  std::vector<int> patiences{0, 1, 2, 3, 4, 5};   // 0 = off
  std::vector<double> min_deltas{0.0, 0.001, 0.01};
};

struct WhatIfRow {
  int patience = 0;
  double min_delta = 0;
  bool stops = false;            // the rule stops within the recorded evaluations
  int stop_epoch = 0;            // the epoch it stops after (the last recorded one when it does not)
  int epochs_saved = 0;          // recorded epochs after stop_epoch
  int best_epoch = -1;           // the rule's best (best.pt); -1 when no value was finite
  double best_value = 0;         // the monitor at best_epoch
  double best_val_acc = 0;       // val acc at best_epoch (0..1)
  int final_weights_epoch = 0;   // the epoch whose weights the run ends with
  std::optional<double> wall_saved_s;
  std::optional<double> saved_fraction;  // of the run's wall time
  std::string reason;            // the rule's words when it stops
  bool as_run = false;           // the run's own patience and min_delta
};

struct WhatIf {
  std::string run;               // run label
  std::string monitor = "val_loss";
  std::string mode = "min";
  int evaluations = 0;           // distinct epochs evaluated
  int last_epoch = 0;            // the last evaluated epoch
  int planned_epochs = 0;        // train.epochs
  bool truncated = false;        // stopped early, cancelled or unfinished: later epochs unknown
  std::optional<double> wall_s;  // the run's wall time (rank 0's last `t`)
  std::string problem;           // why there are no rows ("" when there are)
  std::vector<WhatIfRow> rows;   // patience-major, in the options' order (patience 0: one row)
};

WhatIf earlyStoppingWhatIf(const records::RunRecord& run, const WhatIfOptions& options = {});

// Where early stopping by `rule` (its patience and min_delta as given) would end `run`: its epochs'
// last evaluations fed through the trainer's rule, as the trainer feeds them (evaluations inside
// an epoch do not count). A try of early stopping replays the reference runs through it.
struct ReplayedStop {
  bool stops = false;  // within the recorded epochs
  int epoch = 0;       // the epoch it stops after (the last recorded one when it does not)
  double samples = std::numeric_limits<double>::quiet_NaN();  // training samples seen there
  std::string reason;  // the rule's words when it stops
};
ReplayedStop replayEarlyStopping(const records::RunRecord& run, const EarlyStoppingConfig& rule);

// One run's grid: patience, min Δ, stops after, epochs saved, best epoch, best monitor, val acc
// there, final weights, wall saved, saved %. A run with no rows gives a table with its problem
// as the note.
render::Table whatIfTable(const WhatIf& w);
nlohmann::json whatIfJson(const WhatIf& w);

// For a comparison: each run's patience 1..5 at min_delta 0 (and at its own min_delta when it
// has one), one table; runs with fewer than two evaluations are named in a note.
render::Table whatIfComparisonTable(const std::vector<const records::RunRecord*>& runs);


}  // namespace wb::report
