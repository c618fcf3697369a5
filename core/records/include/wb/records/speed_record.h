#pragma once
// What a try by parts measured of its change's speed, as it keeps it on disk: the training's
// throughput (segments.json, written by `probe segments`; trials.json, from short whole-process
// trials; or an unchanged step's, measured by nothing) and the evaluation's time
// (evaluation-segments.json, evaluation-trials.json). One record, one field list
// (speed_record.cpp) for every writer and reader; what only one kind has is absent in the others,
// and keys it does not know pass through.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/stats/stats.h"

namespace wb::records {

struct SpeedRecord {
  std::string kind;              // "segments" | "evaluation segments" | "trials" | "evaluation trials" | "unchanged"
  std::string changed;           // "speedups.precision 32-true → bf16-mixed"
  int rounds = 0;                // counted rounds (segments) or pairs (trials)
  std::vector<double> baseline_rates, variant_rates;  // samples/s, one per round or pair
  stats::SpeedupEstimate estimate;      // variant over baseline (evaluation: baseline time over variant's)
  bool contended = false;        // no two rounds or pairs to compare: no verdict (the estimate says "contended")
  // Segments (`probe segments`).
  std::optional<std::string> device;
  std::optional<int> steps_per_segment;  // evaluation: passes
  std::optional<bool> steps_sized;       // sized from the warm-up's step (pass) time
  nlohmann::json variant_first;          // per round: the variant's segment came first (booleans)
  std::optional<stats::RoundsNoise> noise;      // the rounds' own (written with its band)
  std::optional<double> other_cores;     // the most another process used during a segment
  std::optional<int> set_aside;          // segments: rounds not slowed alike; trials: pairs the host speed check set aside
  std::optional<double> load_resolution_cores;  // how far a round's load readings could be off
  nlohmann::json busiest_others;         // with rounds set aside: who took the CPU (proto::toJson)
  std::optional<bool> cannot_be_faster;  // the rounds stopped once it could not be shown faster
  std::optional<double> total_s;
  // Trials (short whole processes).
  std::optional<int64_t> steps_per_trial;
  std::optional<int> evaluations_per_trial;
  std::optional<std::vector<double>> variant_startup_s;  // the variant's trials: process start to first step
  std::optional<int> pairs_run;          // every pair the trials ran, counted or not (rounds: the counted)
  std::optional<std::string> settled;    // why no more pairs ran: "clear", "max pairs", "fixed" (the runner's word)
  // The evaluation's (evaluation segments and trials): one evaluation's seconds per round or pair,
  // and (segments) the baseline's train samples/s from its warm-up, to weigh the evaluations.
  std::optional<std::vector<double>> baseline_eval_s, variant_eval_s, baseline_train_rates;
  nlohmann::json unknown;        // keys this list does not name, kept on a rewrite

  bool unchanged() const { return kind == "unchanged"; }
};

nlohmann::json speedRecordJson(const SpeedRecord& record);
// A record from its JSON (never throws; a missing key keeps its default). Null or not an object:
// an empty record (kind "").
SpeedRecord speedRecordFromJson(const nlohmann::json& doc);

// The record of a change that leaves the training steps as they are (the evaluation, early
// stopping, the optimiser's numbers alone): exactly the baseline's throughput, measured by nothing.
SpeedRecord unchangedSpeed();

}  // namespace wb::records
