#pragma once
// Interleaved segments in one process: a training-throughput verdict in seconds for a lever that
// can change inside one running process (its descriptor's Timing::Segments: precision, loader
// workers, pin memory, channels-last, the multi-tensor step, cuDNN autotune, TF32; and the batch
// size). Each arm keeps its own loader and optimiser; the 4-D weights change layout when the
// arms' channels-last differs (their gradients made anew), LibTorch's global switches on entry.
// The baseline's and the variant's settings alternate every `steps` training steps on one model
// (a round times each once, which goes first a coin flip: report/rounds_rule.h), after one untimed warm-up
// of each (kernels chosen, loader threads started, the step time measured: unless `steps` is given,
// a segment is as many steps as make min_segment_s on the faster arm, the way benchmark libraries
// size an iteration count), each segment after two untimed steps; each segment's samples/s (data wait included) is one value. Segments seconds
// apart share the host's speed far better than whole runs do, so the noise is the rounds' own
// (stats::roundsNoise) and the verdict is the product's rule (stats::roundsRateSpeedup with
// the looks of stats::Sequential: rounds are added until the verdict is clear, at most
// max_rounds). This measures throughput only, and says so; `workbench-cli try` composes it with
// samples to target (wb/experiment/composed_try.h).
//
// One process, one rank. Errors: InvalidConfig naming each field that cannot change in one
// process (segmentLeverErrors), the trainer's errors for a config this machine cannot run, Data;
// Cancelled when `stop` is set.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/processes.h"
#include "wb/common/result.h"
#include "wb/probe/math_check.h"
#include "wb/stats/rounds_rule.h"
#include "wb/stats/stats.h"
#include "wb/render/table.h"

namespace wb::probe {

// The config fields a segment may change (everything else must be equal): the speedups a try by
// parts times by segments (their descriptor's Timing::Segments) and the batch.
const std::vector<std::string>& segmentLevers();

struct SegmentsOptions {
  Config baseline, variant;
  int steps = 0;                   // timed steps per segment; 0: sized from the warm-up so that the
                                   // faster arm's segment lasts at least min_segment_s (at least 3)
  double min_segment_s = 0.5;      // a segment's least duration when sized (warm-up excluded)
  int min_rounds = stats::kSegmentMinRounds, max_rounds = stats::kSegmentMaxRounds;
  double min_effect = stats::kDefaultMinEffect;
  bool evaluation = false;         // time evaluations (the validation split, `steps` passes a segment)
                                   // instead of training steps: for the evaluation levers too
  bool evaluation_after = false;   // and then the evaluations too, in this process, in their fewest
                                   // rounds (min_rounds): a training lever that acts there as well
                                   // (SegmentsResult::evaluation_after); not with `evaluation`
  bool only_faster = false;        // the question is only "faster?": stop once it cannot be shown so
                                   // (stats::roundsCannotBeFaster; evaluations: faster to the target,
                                   // their share of the run weighed: stats::evaluationMinEffect);
                                   // with math_checked, only when the
                                   // change keeps the math (else a slower step may still need so many
                                   // fewer samples that it is faster to the target)
  // Set: this process first checks whether the change keeps the math (math_check.h, the same two
  // configs, its trainer) and hands the result here before the first round: a try by parts asks
  // both of one process, not two. An error it returns ends the probe. A change of the math takes
  // all its training rounds (stats::leastRounds).
  std::function<Status(const MathCheckResult&)> math_checked;
  std::function<void(const std::string&)> progress;
  const std::atomic<bool>* stop = nullptr;
};

struct SegmentsResult {
  std::string changed;             // "speedups.precision 32-true → bf16-mixed"
  std::string device;
  bool evaluation = false;         // evaluation segments: rates are validation samples/s
  int steps = 0, rounds = 0;       // steps: a segment's (evaluation: passes), as given or sized
  double train_rate = 0;           // evaluation: the baseline's train samples/s from its warm-up
  int64_t val_samples = 0;         // evaluation: the validation split's size
  bool sized = false;              // steps were sized from the warm-up's step time
  std::vector<double> baseline_rates, variant_rates;  // samples/s, one per round
  std::vector<bool> variant_first;                    // per round: the variant's segment came first
  stats::RoundsNoise noise;
  stats::SpeedupEstimate estimate;  // variant over baseline, train samples/s
  stats::Sequential looks;          // what the verdict was judged at
  double other_cores = 0;            // the most another process used during a segment
  int set_aside = 0;                 // rounds whose segments were not slowed alike (stats::roundCounts)
  double load_resolution_cores = 0;  // how far a round's two load readings could be off (CpuShare::
                                     // resolution_cores, both segments'), the largest over the rounds
  std::vector<ProcessLoad> busiest_others;  // with rounds set aside: who took the CPU, busiest first
  bool contended = false;            // fewer than two rounds counted: no verdict (the table says so)
  bool cannot_be_faster = false;     // only_faster: the rounds stopped once it could not be shown faster
  double total_s = 0;
  std::shared_ptr<const SegmentsResult> evaluation_after;  // SegmentsOptions::evaluation_after's rounds
};

// "" when a and b differ only in segmentLevers() (or not at all); else one line per other field:
// "data.limit_train differs (0 vs 2000): only speedups.precision, ... change within one process;
// use `workbench-cli try` for it".
// `evaluation`: the evaluation levers (evaluationLevers) may differ too.
std::string segmentLeverErrors(const Config& a, const Config& b, bool evaluation = false);
// segmentLevers() and the evaluation's: the speedups timed by evaluation and the evaluation batch.
const std::vector<std::string>& evaluationLevers();

Result<SegmentsResult> probeSegments(const SegmentsOptions& options);

nlohmann::json segmentsJson(const SegmentsResult& result);
render::Table segmentsTable(const SegmentsResult& result);

}  // namespace wb::probe
