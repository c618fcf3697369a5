#pragma once
// Whether a change keeps the training's math, as the math check (wb/probe/math_check.h, `probe
// math`, `probe segments --math-check`) writes it to math.json and a try by parts reads it back:
// the first steps' losses from one seed with and without the change, their deviations against the
// stated tolerance, and the verdict. One field list (math_record.cpp) writes and reads it; keys it
// does not know pass through.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wb::records {

struct MathStep {
  int64_t step = 0;                              // 1-based; the eval row is step 0 (written "eval")
  double baseline = 0, variant = 0;              // training loss (the eval row: validation loss)
  std::optional<double> repeat;                  // the baseline's rerun
  double deviation = 0;                          // |variant - baseline| / max(|baseline|, 1e-3)
  double tolerance = 0;                          // allowed at this step
};

struct MathCheckRecord {
  std::string changed;     // "speedups.workers 0 → 2"
  std::string speedup;     // the varied speedup's key, "" when none (e.g. train.batch_size)
  std::string device;
  int64_t train_samples = 0;  // the training split's samples (its limit applied); 0: not trained here
  std::string dataset_id;     // the dataset's files' fingerprint (wb::folderFingerprint); "": unknown
  bool checked = false;    // the steps were compared (false: what the descriptor says, and why)
  bool keeps_math = false;
  bool inactive = false;   // asked for but inactive on this machine: keeps the math here
  int steps = 0;           // K asked; rows hold the steps both reached
  double tolerance_per_step = 0;
  std::string tolerance_rule;  // the tolerance in words
  double max_deviation = 0, max_repeat_deviation = 0;
  int64_t max_at_step = 0;
  int64_t diverged_at_step = 0;  // the first step past its tolerance (0: none)
  std::vector<MathStep> rows;    // per step, then the validation loss after the last (step 0)
  std::string verdict;           // one sentence: kept or changed, and why
  double total_s = 0;
  nlohmann::json unknown;        // keys a newer writer added, kept on a rewrite
};

nlohmann::json mathCheckJson(const MathCheckRecord& record);
// Never throws; a missing key keeps its default (not an object: an empty record, checked false).
MathCheckRecord mathCheckFromJson(const nlohmann::json& doc);

}  // namespace wb::records
