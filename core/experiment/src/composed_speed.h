#pragma once
// How a try by parts times its change (composed_try.h): which part each changed field is, the
// configs its measurements read (parts/*.json), and the speed side: whether the change keeps the
// math, the training's throughput (segments in one process, or short whole-process trials) and,
// when the evaluation changes, the evaluation's time. Internal to wb_experiment.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/experiment/composed_try.h"
#include "wb/records/math_record.h"
#include "wb/records/speed_record.h"

namespace wb::experiment::detail {

// How a try by parts times one changed field. A speedup's field: as its descriptor says
// (Speedup::timing). The batch: short trials, not segments: lenet at batch 256 against 64
// measured 1.10-1.15x in most segment runs where whole runs measure 1.22x, and now and then (no
// other load seen) the batch-256 arm's steps took 4x as long (0.43x). The evaluation batch: an
// evaluation. The optimiser's numbers change the arithmetic, not how long a step takes
// (MathOnly): the throughput is measured without them, the runs to the target with them.
enum class Part { Segments, Trials, Evaluation, Replay, MathOnly };

// The changed fields (but the name and the seed) by how they are timed; unknown: not by parts.
struct Changes {
  std::map<Part, std::vector<std::string>> parts;
  std::vector<std::string> unknown;
  // A changed lever that keeps the math acts in the evaluation too (Speedup::in_evaluation): its
  // evaluation is timed as well (a math-changing one's is its variant runs' own).
  bool evaluation_too = false;
  bool has(Part p) const { return parts.count(p) > 0; }
  // Only the optimiser's numbers changed: the steps, the start-up and the evaluations are the
  // baseline's, only the samples to target change.
  bool onlyArithmetic() const { return unknown.empty() && parts.size() == 1 && has(Part::MathOnly); }
  // Whether the evaluation is timed: its own levers changed, or a lever that acts in it too.
  bool timesEvaluation() const { return has(Part::Evaluation) || evaluation_too; }
};

Changes changesOf(const TryOptions& o);

// Writes the configs the measurements read; a folder holding another try's is refused.
Status writeConfigs(const TryOptions& o);

// What the speed side measured: math.json, the training's throughput (segments.json or
// trials.json, or the unchanged steps' record) and, when the evaluation changes, its time
// (evaluation-segments.json or evaluation-trials.json).
struct Speed {
  std::optional<records::MathCheckRecord> math;  // set once measureSpeed returns
  records::SpeedRecord throughput;
  std::optional<records::SpeedRecord> evaluation;
};

// The math check, the training's throughput and the evaluation's time: one process when a
// segments' probe measures the change (it checks the math first, writing math.json before its
// rounds), else the math check on its own, then short trials (a change one process cannot switch)
// or nothing to time. `futility`: the training segments stop once the change, keeping the math,
// cannot be shown faster. A record already in the try's folder is kept (a try continued).
Result<Speed> measureSpeed(const TryOptions& o, bool futility, const Hooks& h);

// A `phase` event (wb/proto/experiment_events.h) through h: the try measures `what` now, `done`
// of `total` runs of it finished (total 0: not counted); `kept`: read from its folder instead.
void phase(const Hooks& h, const std::string& what, int done = 0, int total = 0, bool kept = false);

}  // namespace wb::experiment::detail
