#pragma once
// The events of experiments of many runs (wb/experiment/paired_runner.h: the ladder and `try`)
// beyond the ladder's own (wb/proto/event_types.h: ladder, rung_start, rung_end, end): every
// event rank -1, versioned like a run's. Readers ignore unknown fields.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "wb/proto/event_types.h"

namespace wb::proto {

struct PairEndEvent {              // a pair of runs (reference, variant) finished
  static constexpr const char* kType = "pair_end";
  int64_t index = 0;               // the variant's step
  std::string key;                 // the variant's
  int pair = 0;                    // 1-based, per variant
  bool variant_first = false;      // the order it ran in
  bool counted = false;            // both ended ok and neither was contended
  std::string settled;             // why no more pairs follow ("clear", "max pairs", ...), or ""
  nlohmann::json estimate;         // the variant's estimates so far: {to_target, throughput, wall}
};

struct PhaseEvent {                // a try by parts moved on to a part of its measurement
  static constexpr const char* kType = "phase";
  std::string phase;               // what it measures now, in words ("the experiment's reference runs")
  int done = 0, total = 0;         // runs of this part finished, of how many (total 0: not counted)
  bool kept = false;               // taken from the folder (a try continued), not measured again
};

struct TryEndEvent {               // `try`'s single end (after its rung_start/rung_end/pair_end)
  static constexpr const char* kType = "end";
  std::string status = kStatusFailed;
  std::string out_dir;
  nlohmann::json result;           // try.json's content (wb/experiment/try.h)
  std::string answer;              // try.json's answer: the sentence every surface prints
};

void writeFields(const PairEndEvent& e, nlohmann::json& event);
void writeFields(const TryEndEvent& e, nlohmann::json& event);
void writeFields(const PhaseEvent& e, nlohmann::json& event);
PairEndEvent readPairEndEvent(const nlohmann::json& event);
TryEndEvent readTryEndEvent(const nlohmann::json& event);
PhaseEvent readPhaseEvent(const nlohmann::json& event);

}  // namespace wb::proto
