#pragma once
// Speedups with their uncertainty: how a set of repeated runs becomes "1.31× [1.12, 1.52]
// faster", "1.02× [0.91, 1.14] within noise" or "1.26× (1 run each: no interval)". Pure
// functions of numbers; Qt-free, LibTorch-free, no shared state (safe from any thread).
//
// Why these statistics. On the machines this product runs on the noise is one-sided
// (interference only adds time) and bimodal (the host sits at one of two speeds, ~1.3× apart, for
// a minute or more). A mean of times is pulled by the slow mode; pairs of runs close in time share
// the mode. So:
//  - Paired runs (A B, B A, alternated): each pair gives one log-ratio ln(baseline / variant). The
//    point estimate is the MEDIAN of the per-pair log-ratios (one pair in which the host flipped
//    speed moves it little). The 95 % interval is a Student t interval on the log-ratios around
//    that median, with the spread floored at this host's measured pair spread: two pairs that
//    agree by luck cannot claim more precision than the machine has. t (not a bootstrap): a
//    bootstrap of 2-5 values collapses to their range and is far too narrow; t with n − 1 degrees
//    of freedom is honest with a handful of pairs (2 pairs: ×12.7 the standard error).
//  - Unpaired groups (compare of existing runs): the difference of the groups' median log times,
//    a pooled t interval (spread floored at this host's run spread, as above).
//  - Fewer than 2 pairs (or 1 run each): no interval, verdict NoInterval, never bold.
//
// The noise band. noiseBand (e.g. 0.14 = ±14 %) is this host's run-to-run spread: a repeat of the
// same run lands within [1/(1+band), 1+band] of the typical time 95 % of the time, so one run's
// log time has sd σ = ln(1+band)/1.96 and a pair's log-ratio sd √2·σ (the floor above). A band
// ≤ 0 or NaN means "unknown": no floor, threshold 1.
//
// The verdict rule (documented in README, "How speedups are measured"):
//  - Faster  when the interval's lower end lo > 1 + band: with 95 % confidence the effect is
//    larger than the machine's own run-to-run spread (no effect smaller than the noise is called
//    a speedup);
//  - Slower  when hi < 1 / (1 + band), symmetrically;
//  - WithinNoise otherwise (the interval reaches into the band);
//  - NoInterval with fewer than 2 pairs (or 1 run each).
// verdictIsClear: Faster or Slower, or WithinNoise with the whole interval inside
// [1/(1+band), 1+band] (more pairs would not make it a speedup); adaptive runs stop there.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace wb::report {

enum class Verdict { Faster, Slower, WithinNoise, NoInterval };  // NoInterval: 1 run each, or too few pairs

struct SpeedupEstimate {      // speedup = baseline_time / variant_time (> 1 = variant faster)
  double point = std::numeric_limits<double>::quiet_NaN();  // the estimate
  double lo = std::numeric_limits<double>::quiet_NaN();     // 95 % interval (NaN when none)
  double hi = std::numeric_limits<double>::quiet_NaN();
  int pairs = 0;              // pairs (paired) or the smaller group's runs (groups) it rests on
  int baseline_runs = 0, variant_runs = 0;  // the values used (after dropping non-finite ones)
  Verdict verdict = Verdict::NoInterval;
  double noise_band = 0;      // the band the verdict was judged against (0 = unknown)
  std::string method;         // "median of 5 per-pair log-ratios, 95% t interval"
  bool hasInterval() const { return std::isfinite(lo) && std::isfinite(hi); }
};

// Per-pair ratios (each pair run close in time, order alternated): pair i is
// (baselineTimes[i], variantTimes[i]); a pair with a value that is not finite and > 0 is dropped,
// and only the common length counts. For a throughput (higher = better) pass the rates swapped,
// or use pairedRateSpeedup.
SpeedupEstimate pairedSpeedup(const std::vector<double>& baselineTimes, const std::vector<double>& variantTimes,
                              double noiseBand);
// Unpaired repeats of two configurations (e.g. compare of existing runs): from the groups. An
// interval needs at least 3 runs in all with one group of 2 or more.
SpeedupEstimate groupSpeedup(const std::vector<double>& baselineTimes, const std::vector<double>& variantTimes,
                             double noiseBand);
// The same for rates (samples/s; speedup = variant / baseline).
inline SpeedupEstimate pairedRateSpeedup(const std::vector<double>& baselineRates,
                                         const std::vector<double>& variantRates, double noiseBand) {
  return pairedSpeedup(variantRates, baselineRates, noiseBand);
}
inline SpeedupEstimate groupRateSpeedup(const std::vector<double>& baselineRates,
                                        const std::vector<double>& variantRates, double noiseBand) {
  return groupSpeedup(variantRates, baselineRates, noiseBand);
}

// Several candidates measured in interleaved rounds inside one process (the worker probe: every
// round times each candidate once, seconds apart). Such stretches share the host's speed far more
// than whole runs do, so their noise is measured from the rounds themselves: what is left of the
// log rates once each candidate's level and each round's level are taken out (a two-way layout:
// (C − 1)(R − 1) degrees of freedom pooled over all candidates, where one comparison alone has
// R − 1). rates[c][r]: candidate c's rate in round r; only the rounds every candidate has count.
struct RoundsNoise {
  double sigma = std::numeric_limits<double>::quiet_NaN();  // sd of one stretch's log rate
  int df = 0;                                               // 0: fewer than 2 candidates or rounds
  double band() const;                                      // bandOfLogSigma(sigma); NaN without df
};
RoundsNoise roundsNoise(const std::vector<std::vector<double>>& rates);
// Candidate `variant` against `baseline` over the same rounds (speedup = variant rate / baseline
// rate): the median per-round log-ratio, a t interval (noise.df degrees of freedom) with the
// pooled noise √2·σ/√R, the verdict against `noiseBand` (the caller's: at least noise.band()).
// NoInterval without noise.df.
SpeedupEstimate roundsRateSpeedup(const std::vector<double>& baselineRates, const std::vector<double>& variantRates,
                                  const RoundsNoise& noise, double noiseBand);

// The verdict of an estimate by the rule above (pairedSpeedup/groupSpeedup already set it).
Verdict verdictOf(double lo, double hi, double noiseBand);
bool verdictIsClear(const SpeedupEstimate& estimate);  // for adaptive stopping (see above)
// "faster" | "slower" | "within noise" | "1 run each: no interval"
std::string verdictWord(Verdict verdict);
// "1.31× [1.12, 1.52] faster", "1.02× [0.91, 1.14] within noise", "1.26× (1 run each: no
// interval)", "–" when there is no point estimate.
std::string formatEstimate(const SpeedupEstimate& estimate);
// Whether a view may make the multiplier stand out (bold): only a clear Faster or Slower.
inline bool emphasise(const SpeedupEstimate& e) { return e.verdict == Verdict::Faster || e.verdict == Verdict::Slower; }

// ---- The noise band itself ----

// σ of one run's log time for a band (see above); 0 for an unknown band.
double runLogSigma(double noiseBand);
// The band for a σ of log times: e^(1.96σ) − 1.
double bandOfLogSigma(double sigma);
// The band that repeats of one configuration show (sample sd of their log times); NaN with fewer
// than 2 usable values.
double bandOfRepeats(const std::vector<double>& times);
// The band that A/A pairs show (sd of the pair log-ratios / √2); NaN with fewer than 2 pairs.
double bandOfPairs(const std::vector<double>& timesA, const std::vector<double>& timesB);
// The smallest speedup that n pairs can call Faster on this host under the rule above when the
// pairs scatter as the band says: (1+band) · e^(t·√2σ/√n). n = 1 uses the normal quantile (what
// one pair could show were an interval drawn from the band alone). NaN for an unknown band.
double smallestDetectable(int pairs, double noiseBand);
// Student t quantile t(0.975, df) (df ≥ 1; 1.96 beyond the table).
double tQuantile975(int degreesOfFreedom);

}  // namespace wb::report
