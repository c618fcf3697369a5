#pragma once
// Samples to target: how many training samples (or optimiser steps: any unit, the same in both
// arms) a configuration needs to reach the target accuracy, compared the way MLPerf compares a
// submission's convergence with its reference convergence points. The baseline's reference runs
// (n ≥ 5, each its own seed) and a variant's runs each stop at the target (or at a cap). Pure
// functions of numbers; Qt-free, LibTorch-free.
//
// How samples to target are compared:
//  - Seeds scatter samples to target multiplicatively, so the comparison is on ln samples: the
//    ratio variant / reference is the ratio of the arms' geometric means; its interval a Welch t
//    interval (each arm its own spread, Satterthwaite degrees of freedom), because a lever that
//    changes the math (precision, the batch) may change the seed spread as well. An arm of one run
//    borrows the other arm's spread: one run against the reference's convergence points.
//  - Runs that stop at an evaluation know their samples only to within one evaluation interval
//    (`resolution`): an arm's spread is taken as at least that of a uniform over one interval
//    (resolution / its geometric mean / √12), so runs that all stop at the same evaluation do not
//    make an exact answer.
//  - The verdict is two one-sided tests, each at α/2 (α = 5 % in all, as every verdict of the
//    product): "more samples needed" when the interval lies above 1 and the ratio is at least
//    1 + min effect, "fewer samples needed" symmetrically (stats.h's verdictOf), else within noise.
//  - A run that did not reach the target by the cap is censored: it counts as the samples it ran
//    (the cap), which is fewer than it needs. A censored variant run makes the ratio a lower bound
//    ("at least"): only "more samples needed" can be concluded and the interval has no upper end.
//    A censored reference run makes it an upper bound: only "fewer". Both: no conclusion. Chosen
//    over a Kaplan-Meier or rank method because with 5-10 runs and a cap at 3× the baseline's
//    samples a run that hits the cap is itself the answer (it needs far more), and the estimator
//    stays the one used without censoring; the bound says plainly what is not known.
//  - Power: n reference runs (and as many variant runs) detect a change of δ with probability p
//    when ln(1 + δ) ≥ (t(1 − α/2) + t(p)) · s · √(2 / n), s the seed spread (sd of ln samples).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "wb/stats/log_estimate.h"
#include "wb/stats/stats.h"

namespace wb::stats {

// One run trained to the target (or to its cap).
struct TargetRun {
  double samples = std::numeric_limits<double>::quiet_NaN();  // when it reached the target, or stopped
  bool reached = true;                                         // false: stopped at the cap (censored)
  uint64_t seed = 0;
};

enum class SamplesVerdict { More, Fewer, WithinNoise, NoInterval };
// Whether the ratio variant / reference is known, or only bounded by censored runs.
enum class SamplesBound { Exact, AtLeast, AtMost, Unknown };

struct SamplesRule {
  double min_effect = kDefaultMinEffect;  // |ratio − 1| below this is within noise however sure
  double alpha = kFalseAlarmRate;         // two-sided: α/2 for each direction
  double resolution = 0;                  // samples between evaluations (0: exact values)
};

// One arm's runs on the log scale: the geometric mean, the standard error of its log.
struct ArmSamples {
  int runs = 0, censored = 0;
  double log_sd = std::numeric_limits<double>::quiet_NaN();  // seeds' sd of ln samples (NaN: < 2 runs)
  LogEstimate samples;                                        // geometric mean, se = sd / √n, df n − 1
};
// The usable runs (finite samples > 0) of an arm; the spread floored by `resolution` (see above).
ArmSamples summariseRuns(const std::vector<TargetRun>& runs, double resolution = 0);

struct SamplesComparison {
  double ratio = std::numeric_limits<double>::quiet_NaN();  // variant / reference (> 1: more samples)
  double lo = std::numeric_limits<double>::quiet_NaN();     // interval at `level`; lo 0 or hi ∞ when bounded
  double hi = std::numeric_limits<double>::quiet_NaN();
  double level = 1 - kFalseAlarmRate;
  SamplesVerdict verdict = SamplesVerdict::NoInterval;
  SamplesBound bound = SamplesBound::Exact;
  ArmSamples reference, variant;    // the variant's se is the reference's spread when it has one run
  double log_se = std::numeric_limits<double>::quiet_NaN();  // of ln ratio
  double df = 0;                    // Satterthwaite
  double min_effect = kDefaultMinEffect;
  std::string method;               // "Welch t on ln samples, 5 reference and 5 variant runs, 95 % interval"
  bool hasInterval() const { return std::isfinite(log_se) && df >= 1; }
};

SamplesComparison compareSamples(const std::vector<TargetRun>& reference, const std::vector<TargetRun>& variant,
                                 const SamplesRule& rule = {});

// "more samples needed" | "fewer samples needed" | "samples within noise" | "no interval"
std::string samplesVerdictWord(SamplesVerdict verdict);
// "1.11× the samples [1.04, 1.19]: more samples needed"; "at least 2.90× the samples (2 of 5 runs
// did not reach the target by the cap): more samples needed"; "–" without a ratio.
std::string formatSamples(const SamplesComparison& comparison);

// The seeds' spread: sd of ln samples of the runs that reached the target (NaN with < 2).
double seedSpread(const std::vector<TargetRun>& runs);
// Reference runs needed to detect a change of `change` (0.05: 5 % more or fewer samples) with
// probability `power` at the two-sided α, the seed spread `spread` (sd of ln samples). The
// variant has as many runs when variantRuns ≤ 0, else variantRuns (1: one run against the
// reference points, which no number of reference runs may suffice for). 0 when more than
// kMostReferenceRuns would be needed; NaN spread: 0.
inline constexpr int kMostReferenceRuns = 1000;
int runsToDetect(double spread, double change = 0.05, double power = 0.8, int variantRuns = 0,
                 double alpha = kFalseAlarmRate);

}  // namespace wb::stats
