#pragma once
// try.json: what one change against its baseline measured, by pairs of whole runs
// (wb/experiment/try.h) or by parts (wb/experiment/composed_try.h). One record, one field list
// (try_record.cpp) for its writers and its readers (the ladder's steps, the window's speedup rows,
// tune's finals); keys it does not know pass through and an older file reads with its defaults.
// The parts a try by parts adds are the records of what measured them (wb/records/math_record.h,
// speed_record.h, the composed time to target), kept here as their own JSON.
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"

namespace wb::proto {

// One pair of whole runs, in the order they ran.
struct TryPairRecord {
  int pair = 0;
  bool variant_first = false, counted = false;
  std::string reference_dir, variant_dir;
  int64_t seed = 0;  // the seed both runs trained; 0: their configs' (a try from before pairs had their own)
};

struct TryArmRecord {
  std::string label;  // "the baseline", or what the variant changes
  Config config;
};

// One measure's median over the counted pairs (or the parts), per side; NaN (null): none.
struct TryMedian {
  double baseline = std::numeric_limits<double>::quiet_NaN();
  double variant = std::numeric_limits<double>::quiet_NaN();
};

struct TryRecord {
  std::string status;            // running | ok | failed | cancelled
  std::string answer;            // the answer in one sentence (wb/experiment/try.h tryAnswer): what every surface prints
  std::string cancelled_at;      // the variant whose pair was cut
  std::string speedup;           // the speedup's key when the caller names one ("precision"), else ""
  std::string setting;           // what the variant changes, in words ("precision bf16-mixed")
  std::string measured_at;       // UTC
  TryArmRecord baseline, variant;
  bool same_config = false;      // an A/A check
  double target_acc = std::numeric_limits<double>::quiet_NaN();  // null: none known
  std::optional<std::string> target;  // the try's target in words (and from what); null without one
  std::string target_source;     // which runs it is from: "the experiment's 5 reference runs", ...
  double noise_band = 0, min_effect = 0;
  int max_pairs = 0, fixed_pairs = 0, pairs = 0;  // pairs: counted
  std::string settled;           // why no more pairs ran (the runner's word)
  bool reached = false;          // the variant reached the target
  std::map<std::string, TryMedian> medians;  // time_to_target_s, train_samples_per_s, wall_s | eval_s
  // {to_target, throughput, wall}: each an estimate record (wb/stats/estimate_json.h) with, by
  // parts, its text; verdict "contended" where the host's load left no verdict.
  nlohmann::json estimate = nlohmann::json::object();
  std::vector<TryPairRecord> runs;
  std::string run_command;       // the user's command template, when the runs are that command's
  std::optional<std::string> variant_command;  // the variant's own command ("": the workbench's own)

  // By parts: method "composed", and the records of the parts (null where a part was not measured).
  std::string method;            // "composed" | "" (pairs of whole runs)
  std::string method_reason;     // why this method: asked for, or chosen by `try` and why ("" before it said)
  std::string error;             // why a try by parts stopped, when it did
  // A try by parts cut short: what the same command reuses, in words ("the math check",
  // "3 of 5 reference runs"); absent otherwise.
  std::vector<std::string> kept;
  nlohmann::json math, throughput, evaluation, early_stopping, samples, references, composed;
  nlohmann::json variant_looks;  // the variant's runs to the target, looked at as they finished
  std::vector<std::string> variant_runs;  // their folders
  std::string words;             // "1.31× faster to target: 1.45× throughput, ..."
  bool training_only = false;    // no reference runs: the training's time only

  nlohmann::json unknown;        // keys a newer writer added, kept on a rewrite

  bool byParts() const { return method == "composed"; }
  // The estimate's to_target record's verdict word ("faster", "contended", ...; "" when none).
  std::string verdictWord() const;
};

nlohmann::json tryRecordJson(const TryRecord& record);
// Never throws; a missing key keeps its default. Not an object: an empty record (status "").
TryRecord tryRecordFromJson(const nlohmann::json& doc);

}  // namespace wb::proto
