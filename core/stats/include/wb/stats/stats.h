#pragma once
// Speedups with their uncertainty: how a set of repeated runs becomes "1.31× [1.12, 1.52]
// faster", "1.02× [0.91, 1.14] within noise" or "1.26× (1 run each: no interval)". Pure
// functions of numbers; Qt-free, LibTorch-free, no shared state (safe from any thread).
//
// How a verdict is decided (docs/verdicts.md says the same for users):
//  - Paired runs (A B, B A, alternated): pair i gives r_i = ln(baseline time / variant time). The
//    estimate is the mean of the r_i (the geometric mean of the ratios); the interval is a Student
//    t interval, mean ± t(1 − α/2, n − 1) · s / √n, on the pairs' own spread s. Why t on the
//    pairs: pairs share the host's minute, so their spread is the noise that matters; with 3-10
//    pairs a bootstrap collapses to the range and a rank interval (Wilcoxon) cannot reach 95 %
//    below 6 pairs, while t with n − 1 degrees of freedom is honest about how little a few pairs
//    know.
//  - A pair in which the host changed speed: set aside only when the host speed check saw it
//    (its runs' kernel timings, before and after each, spread beyond the check's own threshold:
//    hostChangedOverPair); the estimate rests on the others, `method` names it, and the look
//    still spends its α. Never by the pairs' values alone: setting aside the pair farthest from
//    others whose spread is small by chance keeps a narrow interval (Gaussian pairs: 6 % called
//    at a 5 % rate), and on a host flipping often it keeps the flipped pairs and drops the steady
//    one. A flip the check cannot see widens the pairs' spread: a verdict within noise.
//  - A stored (measured) run band is a sanity floor on the spread of very few pairs: s is pooled
//    with the band's pair spread as if the band were one more pair, and only when s is smaller,
//    so its weight fades as pairs accumulate. An unmeasured host has no floor: the pairs alone
//    carry the noise.
//  - Faster when the interval lies above 1 (significance) AND the estimate is at least
//    1 + min_effect (relevance, default 2 %); Slower symmetrically; else within noise. Fewer than
//    2 pairs: NoInterval.
//  - Adaptive experiments look after every pair and stop when the verdict is clear: look n of at
//    most N spends α_n = A(n) − A(n − 1) of kSpentAlarmRate (4.5 %), A(n) = 0.045 · ((n − 1) /
//    (N − 1))³ (an O'Brien-Fleming-like spending: early looks need overwhelming evidence). The
//    α_n add up to 4.5 %, so by the union bound an A/A experiment ends faster or slower with
//    probability ≤ 4.5 % however early it stops, under the 5 % promised. A fixed number of pairs
//    spends all 4.5 % at its one look. The interval shown is the one the verdict rests on: its
//    level (1 − α_n) is in the estimate. bench_verdicts measures the rate over every noise model
//    (plain noise 1-20 %, hosts flipping speed, recorded runs); test_verdict_sim holds it ≤ 5 %.
//  - Unpaired groups (compare of existing runs): the difference of the groups' mean log times, a
//    pooled t interval (floor as above) at 5 %, the same verdict.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace wb::stats {

enum class Verdict { Faster, Slower, WithinNoise, NoInterval };  // NoInterval: 1 run each, or too few pairs

inline constexpr double kFalseAlarmRate = 0.05;   // two-sided, over all looks of an experiment: the promise
// What an experiment of pairs spends over its looks: half a point under the promise, since t is
// exact only for normal pairs (at 5 % a recorded 2-core host's windows of 10 pairs ended faster
// or slower 5.0 % of the time, and normal pairs exactly 5 %).
inline constexpr double kSpentAlarmRate = 0.045;
inline constexpr double kDefaultMinEffect = 0.02; // the practical threshold (--min-effect)

// What a verdict is judged by (see above).
struct VerdictRule {
  double min_effect = kDefaultMinEffect;  // |effect| below this is within noise however sure
  double floor_band = 0;                  // a measured run band: floors the spread of few pairs (0: none)
  double alpha = kFalseAlarmRate;         // the two-sided error this look spends
};

// Pairs that do not count (contended) or are set aside (the host speed check) that more pairs
// replace, per variant, by default (the runner's --rerun-contended).
inline constexpr int kReplacedPairs = 1;

// The looks of an experiment of pairs: adaptive up to max_pairs, or exactly fixed_pairs.
struct Sequential {
  int max_pairs = 5;
  int fixed_pairs = 0;                    // > 0: one look, at this many pairs
  double min_effect = kDefaultMinEffect;
  double floor_band = 0;
  int replaced_pairs = kReplacedPairs;    // pairs set aside (or not counted) that more pairs replace
  // The rule at the look after `pairs` counted pairs (the α that look spends; past max_pairs, a
  // replaced pair's look, the last look's).
  VerdictRule at(int pairs) const;
};
// The rule in a sentence for a table's notes: "Faster or slower only when the interval excludes 1
// and the estimate is beyond ±2 % (the practical threshold); up to 5 pairs, stopping once clear,
// each look spending its share of 4.5 % (false alarms ≤ 5 %); spread steadied by this host's
// measured band (±4 %)."
// `unit`: what one look adds ("pairs", or "rounds" for segments in one process, whose noise is
// the rounds' own).
std::string describeRule(const Sequential& seq, const std::string& unit = "pairs");
// A(n) of the spending above (0 for n < 2, kSpentAlarmRate from n ≥ maxPairs); lookAlpha is
// A(n) − A(n − 1).
double spentAlpha(int pairs, int maxPairs);
double lookAlpha(int pairs, int maxPairs);

struct SpeedupEstimate {      // speedup = baseline_time / variant_time (> 1 = variant faster)
  double point = std::numeric_limits<double>::quiet_NaN();  // the estimate
  double lo = std::numeric_limits<double>::quiet_NaN();     // the interval at `level` (NaN when none)
  double hi = std::numeric_limits<double>::quiet_NaN();
  double level = 1 - kFalseAlarmRate;  // the interval's confidence (1 − the look's α)
  int pairs = 0;              // pairs (paired) or the smaller group's runs (groups) it rests on
  int baseline_runs = 0, variant_runs = 0;  // the values used (after dropping non-finite ones)
  int set_aside = 0;          // pairs set aside: the host speed check saw a flip (see above)
  Verdict verdict = Verdict::NoInterval;
  double noise_band = 0;      // the measured band that floored the spread (0 = none)
  double min_effect = kDefaultMinEffect;  // the practical threshold the verdict used
  std::string method;         // "mean of 5 per-pair log-ratios, 95% t interval"
  bool hasInterval() const { return std::isfinite(lo) && std::isfinite(hi); }
};

// Per-pair ratios (each pair run close in time, order alternated): pair i is
// (baselineTimes[i], variantTimes[i]); a pair with a value that is not finite and > 0 is dropped,
// and only the common length counts. hostChanged[i] (hostChangedOverPair) sets pair i aside.
// For a throughput (higher = better) pass the rates swapped, or use pairedRateSpeedup.
SpeedupEstimate pairedSpeedup(const std::vector<double>& baselineTimes, const std::vector<double>& variantTimes,
                              const VerdictRule& rule = {}, const std::vector<bool>& hostChanged = {});
// Whether the host speed check saw the host change speed over a pair: the largest of its runs'
// kernel timings (each run's before and after, in ms; not timed: ≤ 0) over the smallest exceeds
// 1 + checkBand (the check's own threshold: wb/records/noise.h, HostNoise::hostKernelBand).
bool hostChangedOverPair(const std::vector<double>& kernelMs, double checkBand);
// The host speed check's threshold until its own noise is measured: the two speeds these hosts
// flip between are 1.3-1.5× apart, while a quiet host's kernel moves 3 % between runs.
inline constexpr double kAssumedKernelBand = 0.10;
// Unpaired repeats of two configurations (e.g. compare of existing runs): from the groups. An
// interval needs at least 3 runs in all with one group of 2 or more.
SpeedupEstimate groupSpeedup(const std::vector<double>& baselineTimes, const std::vector<double>& variantTimes,
                             const VerdictRule& rule = {});
// The same for rates (samples/s; speedup = variant / baseline).
inline SpeedupEstimate pairedRateSpeedup(const std::vector<double>& baselineRates,
                                         const std::vector<double>& variantRates, const VerdictRule& rule = {},
                                         const std::vector<bool>& hostChanged = {}) {
  return pairedSpeedup(variantRates, baselineRates, rule, hostChanged);
}
inline SpeedupEstimate groupRateSpeedup(const std::vector<double>& baselineRates,
                                        const std::vector<double>& variantRates, const VerdictRule& rule = {}) {
  return groupSpeedup(variantRates, baselineRates, rule);
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
// pooled noise √2·σ/√R, the verdict by `rule` (the probe's min_effect: its rounds' band).
// NoInterval without noise.df.
SpeedupEstimate roundsRateSpeedup(const std::vector<double>& baselineRates, const std::vector<double>& variantRates,
                                  const RoundsNoise& noise, const VerdictRule& rule);

// The verdict of an estimate by the rule above (the estimators already set it).
Verdict verdictOf(double point, double lo, double hi, double minEffect);
// For adaptive stopping: Faster or Slower, or within noise for good (the whole interval inside
// [1/(1 + min_effect), 1 + min_effect]: more pairs would not make it a speedup that counts).
bool verdictIsClear(const SpeedupEstimate& estimate);
// "faster" | "slower" | "within noise" | "1 run each: no interval"
std::string verdictWord(Verdict verdict);
// An interval that could not tell a change of kWidestMeasured from none is not a measurement: a
// ladder printed the multi-tensor step as "1.01× [0.03, 30.13]" (three rounds of segments, stopped
// once it could not be shown faster, on two degrees of freedom at a third round's α of 0.1 %). Such
// an estimate (its interval holding 1, wider than ×/÷ 2 about its centre) reads "not measured" with
// why, and draws no error bar; one whose interval excludes 1 is a verdict, and reads as one.
inline constexpr double kWidestMeasured = 2.0;
// "" when the estimate is a measurement, a verdict, a bound or has no interval; else why it is not
// a measurement, in words ("its 99.9 % interval spans 0.03-30×: too wide to tell a 2× change from none").
std::string notMeasuredWhy(const SpeedupEstimate& estimate);
// "1.31× [1.12, 1.52] faster", "1.02× [0.91, 1.14] within noise", "1.26× (1 run each: no
// interval)", "not measured: <why>", "–" when there is no point estimate.
std::string formatEstimate(const SpeedupEstimate& estimate);
// Whether a view may make the multiplier stand out (bold): only a clear Faster or Slower.
inline bool emphasise(const SpeedupEstimate& e) { return e.verdict == Verdict::Faster || e.verdict == Verdict::Slower; }
// Whether a view may draw the estimate's interval (an error bar): a measured one, not a bound.
inline bool drawsInterval(const SpeedupEstimate& e) {
  return e.hasInterval() && e.verdict != Verdict::NoInterval && notMeasuredWhy(e).empty();
}

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
// The smallest speedup that n pairs can call Faster (one look, 5 %) when the pairs scatter as
// the run band says and the estimate lands on the truth: max(1 + min effect, e^(t·√2σ/√n)).
// n = 1 has no interval: NaN. NaN for an unknown band.
double smallestDetectable(int pairs, double noiseBand, double minEffect = kDefaultMinEffect);
// The chance that the last of `maxLooks` looks calls a change Faster, given the estimate after
// `looks` (its point and the standard error of its log), were the looks left to scatter as these
// did around today's point (conditional power under the current estimate), the spread shrinking as
// 1/√looks, judged at the last look's `lastAlpha` with the normal quantile. 1 when nothing can be
// projected (no spread, no point, no look left). Low: a question that is only "faster?" may stop.
double chanceOfFaster(double point, double logSe, int looks, int maxLooks, double lastAlpha, double minEffect);
inline constexpr double kFutilityChance = 0.10;  // below this chance of "faster" at the last look: stop

// Student t quantile t(0.975, df) (df ≥ 1; 1.96 beyond the table).
double tQuantile975(int degreesOfFreedom);
// Student t quantile t(p, df) for any p in (0.5, 1) and df ≥ 1 (NaN otherwise).
double tQuantile(double p, int degreesOfFreedom);

// The middle value (mean of the two middle ones for an even count); NaN when empty.
double median(std::vector<double> values);

}  // namespace wb::stats
