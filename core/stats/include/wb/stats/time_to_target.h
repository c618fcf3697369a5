#pragma once
// Time to target composed from its parts, each measured where it is cheap and precise:
//
//   time to target = start-up + samples to target / train throughput + evaluations × evaluation time
//
// where the throughput ratio comes from interleaved segments in one process (host noise), samples
// to target from runs that stop at the target (seed noise, wb/stats/convergence.h) and the
// evaluations are every `samples_per_evaluation` samples. The speedup is baseline time / variant
// time. Pure functions of numbers; Qt-free, LibTorch-free.
//
// The interval: the delta method on the log scale. ln speedup is a smooth function of the log of
// each independent part (start-ups, the baseline's rate, the throughput ratio, each arm's samples
// to target, the evaluation time and its ratio); its variance is the sum of (∂ ln speedup / ∂ ln
// part)² × the part's log variance, and its degrees of freedom Welch-Satterthwaite's over the
// parts. Chosen over a bootstrap over the runs because the parts rest on 5-10 values each, where a
// bootstrap collapses to their range (stats.h's reason for t intervals), and because it is exact
// where it matters most: when only the throughput is uncertain and the time is all training, the
// interval is the throughput's own, so a lever that keeps the math gets the throughput verdict.
// bootstrapSpeedup (each part drawn from its t distribution, composed, percentiles) is the check
// on the linearisation: tests hold the two to agree where the parts are normal or one part carries
// the uncertainty. Where several parts rest on few degrees of freedom each, the bootstrap's sum of
// t tails is wider than Welch-Satterthwaite's t; the A/A simulation (composed_sim.h) holds the
// delta interval's false alarms to 5 % there.
//
// The verdict is stats.h's rule (verdictOf) at min_effect and the rule's α: faster when the
// interval lies above 1 and the speedup is at least 1 + min effect, slower symmetrically, else
// within noise. Samples to target that are only bounded (censored runs) bound the speedup the other
// way: a variant that needs at least so many samples is at most so fast (only slower can be
// concluded), and the other way round.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "wb/stats/convergence.h"
#include "wb/stats/log_estimate.h"
#include "wb/stats/stats.h"

namespace wb::stats {

struct TimeToTargetParts {
  LogEstimate baseline_startup_s = exactly(0);  // process start to the first training step
  LogEstimate variant_startup_s = exactly(0);
  // The variant's start-up is the baseline's own estimate (its runs did not time their own): one
  // uncertain value in both arms, whose error mostly cancels in the ratio, never two independent
  // ones (which doubled its variance: a channels-last try's 0.93-1.34× throughput composed to
  // 0.72-1.63×, all of the rest from the reference runs' start-up counted twice). shareStartup().
  bool startup_shared = false;
  LogEstimate baseline_train_samples_per_s;     // the baseline's level in the segments
  LogEstimate throughput = exactly(1);          // variant / baseline train rate (segments)
  // The α the throughput's own look spent (its interval's 1 − level: the segments stop once clear,
  // each look spending a share of 4.5 %); > 0: the composed verdict is judged at that α when it is
  // below the rule's, so an experiment the segments ended early on an extreme value cannot be called
  // again at the full 5 % (the A/A simulation found 6.5 % without this). 0: the rule's α.
  double throughput_alpha = 0;
  LogEstimate baseline_samples;                 // reference runs' samples to target (geometric mean)
  LogEstimate variant_samples;                  // the variant's; ignored when math_kept
  bool math_kept = true;                        // the variant's samples are the baseline's, exactly
  SamplesVerdict samples_verdict = SamplesVerdict::WithinNoise;  // for the words
  SamplesBound samples_bound = SamplesBound::Exact;
  LogEstimate baseline_eval_s = exactly(0);     // one evaluation
  LogEstimate eval_speed = exactly(1);          // baseline / variant evaluation time (segments)
  double samples_per_evaluation = 0;            // > 0: evaluations = samples / this; else `evaluations`
  double evaluations = 0;

  // The samples part from the variant's runs against the reference (math_kept false).
  void setSamples(const SamplesComparison& comparison);
  // A lever that keeps the math: the variant needs the baseline's samples (ratio exactly 1).
  void keepMath(const LogEstimate& baselineSamples);
  // The variant starts as the baseline does: one start-up, the baseline's (startup_shared).
  void shareStartup() { variant_startup_s = baseline_startup_s, startup_shared = true; }
  // The variant's own start-up, measured apart from the baseline's.
  void ownStartup(const LogEstimate& variant) { variant_startup_s = variant, startup_shared = false; }
};

// One part with its interval, for the tables: "throughput" 1.45× [1.40, 1.50] (speed factors:
// > 1 helps the variant; samples to target is reference / variant samples).
struct PartInterval {
  std::string name;  // "throughput" | "samples to target" | "evaluation" | "start-up (baseline)" and
                     // "start-up (variant)", or "start-up (both)" when shared"
  double point = std::numeric_limits<double>::quiet_NaN();
  double lo = std::numeric_limits<double>::quiet_NaN();
  double hi = std::numeric_limits<double>::quiet_NaN();
};

struct TimeToTargetEstimate {
  SpeedupEstimate speedup;       // baseline / variant time to target, its interval and verdict
  double baseline_s = std::numeric_limits<double>::quiet_NaN();  // composed times to target
  double variant_s = std::numeric_limits<double>::quiet_NaN();
  double throughput_factor = std::numeric_limits<double>::quiet_NaN();  // variant / baseline rate
  double samples_factor = std::numeric_limits<double>::quiet_NaN();     // reference / variant samples
  double log_se = std::numeric_limits<double>::quiet_NaN();             // of ln speedup
  double df = 0;                 // Welch-Satterthwaite over the parts
  bool math_kept = true;
  SamplesVerdict samples_verdict = SamplesVerdict::WithinNoise;
  SamplesBound bound = SamplesBound::Exact;  // of the speedup: AtMost when the variant's samples are cut
  std::vector<PartInterval> parts;
};

TimeToTargetEstimate composeTimeToTarget(const TimeToTargetParts& parts, const VerdictRule& rule = {});

// The speedup's interval at `level` by a parametric bootstrap over the parts: each part's log
// drawn from its t distribution (normal for exact df), composed; the percentiles. Deterministic
// for a seed.
Interval bootstrapSpeedup(const TimeToTargetParts& parts, double level, int draws, uint64_t seed);

// "1.31× faster to target: 1.45× throughput, 0.90× samples to target (more samples needed)";
// "1.45× faster to target: 1.45× throughput, same samples to target (keeps the math)";
// "1.01× to target, within noise: ..."; "at most 0.40× slower to target: ..." when bounded.
std::string timeToTargetWords(const TimeToTargetEstimate& estimate);

}  // namespace wb::stats
