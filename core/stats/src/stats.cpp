#include "wb/stats/stats.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "wb/common/format.h"

namespace wb::stats {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kZ975 = 1.959964;

bool usable(double v) { return std::isfinite(v) && v > 0; }

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Sum of squared deviations from the mean.
double sumSquares(const std::vector<double>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return ss;
}

double sampleSd(const std::vector<double>& v) {
  return v.size() < 2 ? kNaN : std::sqrt(sumSquares(v) / static_cast<double>(v.size() - 1));
}

std::vector<double> logsOf(const std::vector<double>& values) {
  std::vector<double> out;
  for (double v : values)
    if (usable(v)) out.push_back(std::log(v));
  return out;
}

// Fills point/lo/hi/level/verdict from a centre and half width on the log scale.
void setInterval(SpeedupEstimate& e, double centre, double halfWidth, const VerdictRule& rule) {
  e.point = std::exp(centre);
  e.lo = std::exp(centre - halfWidth);
  e.hi = std::exp(centre + halfWidth);
  e.level = 1 - rule.alpha;
  e.min_effect = rule.min_effect;
  e.verdict = verdictOf(e.point, e.lo, e.hi, rule.min_effect);
}

double meanOf(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// The spread s of `df` degrees of freedom, pooled with a floor σ worth one more degree of
// freedom when the floor is larger (a measured band steadies few pairs; its weight fades).
double flooredSpread(double s, int df, double floorSigma) {
  if (!(floorSigma > s)) return s;
  return std::sqrt((df * s * s + floorSigma * floorSigma) / (df + 1));
}

// "95%", "98.6%": the interval's level as the method names it.
std::string levelWord(double level) {
  char buf[32];
  std::snprintf(buf, sizeof buf, level >= 0.9495 && level <= 0.9505 ? "%.0f%%" : "%.1f%%", level * 100);
  return buf;
}

// ln(num[i] / den[i]) for each i both have, skipping a value that is not finite and > 0.
std::vector<double> logRatios(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> out;
  for (size_t i = 0; i < std::min(num.size(), den.size()); ++i)
    if (usable(num[i]) && usable(den[i])) out.push_back(std::log(num[i] / den[i]));
  return out;
}

std::string runsWord(int n) { return std::to_string(n) + (n == 1 ? " run" : " runs"); }

}  // namespace

double tQuantile975(int df) {
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return kNaN;
  if (df <= 30) return table[df - 1];
  if (df <= 60) return 2.000 + (2.042 - 2.000) * (60.0 - df) / 30.0;
  return kZ975;
}

namespace {

// Regularised incomplete beta I_x(a, b) by its continued fraction (Lentz), for the t CDF.
double betaContinuedFraction(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::abs(d) < tiny ? tiny : d);
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d, c = 1 + aa / c;
    d = 1 / (std::abs(d) < tiny ? tiny : d), c = std::abs(c) < tiny ? tiny : c;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d, c = 1 + aa / c;
    d = 1 / (std::abs(d) < tiny ? tiny : d), c = std::abs(c) < tiny ? tiny : c;
    const double del = d * c;
    h *= del;
    if (std::abs(del - 1) < 1e-14) break;
  }
  return h;
}

double incompleteBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  return x < (a + 1) / (a + b + 2) ? front * betaContinuedFraction(a, b, x) / a
                                   : 1 - front * betaContinuedFraction(b, a, 1 - x) / b;
}

// P(T ≤ t) for Student's t with df degrees of freedom, t ≥ 0.
double tCdfUpper(double t, int df) {
  const double x = df / (df + t * t);
  return 1 - 0.5 * incompleteBeta(0.5 * df, 0.5, x);
}

}  // namespace

namespace {

double solveTQuantile(double p, int df) {
  double lo = 0, hi = 1;
  while (tCdfUpper(hi, df) < p) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (tCdfUpper(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double tQuantile(double p, int df) {
  if (df < 1 || !(p > 0.5 && p < 1)) return kNaN;
  // The looks ask for few (p, df) again and again (simulations: millions): remembered per thread.
  struct Known {
    double p;
    int df;
    double t;
  };
  thread_local std::vector<Known> known;
  for (const Known& k : known)
    if (k.p == p && k.df == df) return k.t;
  const double t = solveTQuantile(p, df);
  if (known.size() < 256) known.push_back({p, df, t});
  return t;
}

double chanceOfFaster(double point, double logSe, int looks, int maxLooks, double lastAlpha, double minEffect) {
  if (!(std::isfinite(point) && point > 0 && logSe > 0 && looks > 0) || looks >= maxLooks) return 1;
  const double share = double(looks) / double(maxLooks);
  const double lastSe = logSe * std::sqrt(share);
  const double z = tQuantile(1 - lastAlpha / 2, 100000);
  const double needed = std::max(z * lastSe, std::log1p(std::max(minEffect, 0.0)));
  const double sd = lastSe * std::sqrt(1 - share);  // of the last look's estimate, given this one's
  return 0.5 * std::erfc((needed - std::log(point)) / (sd * std::sqrt(2.0)));
}

double spentAlpha(int pairs, int maxPairs) {
  if (pairs < 2) return 0;
  if (maxPairs <= 2 || pairs >= maxPairs) return kSpentAlarmRate;
  const double f = double(pairs - 1) / double(maxPairs - 1);
  return kSpentAlarmRate * f * f * f;
}

double lookAlpha(int pairs, int maxPairs) { return spentAlpha(pairs, maxPairs) - spentAlpha(pairs - 1, maxPairs); }

std::string describeRule(const Sequential& seq, const std::string& unit) {
  std::string s = "Faster or slower only when the interval excludes 1 and the estimate is beyond ±" +
                  fmtFixed(seq.min_effect * 100, 1) + " % (the practical threshold); ";
  const std::string spent = fmtFixed(kSpentAlarmRate * 100, 1) + " % (false alarms ≤ " +
                            fmtFixed(kFalseAlarmRate * 100, 0) + " %)";
  s += seq.fixed_pairs > 0 ? std::to_string(seq.fixed_pairs) + " " + unit + ", one look spending " + spent
                           : "up to " + std::to_string(seq.max_pairs) + " " + unit +
                                 ", stopping once clear, each look spending its share of " + spent;
  if (unit != "pairs") return s + "; the noise is the " + unit + "' own.";
  s += seq.floor_band > 0 ? "; the spread of few pairs steadied by this host's measured band (±" +
                                fmtFixed(seq.floor_band * 100, 1) + " %)."
                          : "; the pairs alone carry the noise (this host's band is not measured).";
  return s;
}

VerdictRule Sequential::at(int pairs) const {
  VerdictRule r;
  r.min_effect = min_effect;
  r.floor_band = floor_band;
  r.alpha = fixed_pairs > 0 ? kSpentAlarmRate : lookAlpha(std::min(pairs, max_pairs), max_pairs);
  if (!(r.alpha > 0)) r.alpha = kFalseAlarmRate;  // before the first look: shown, never a verdict
  return r;
}

double runLogSigma(double noiseBand) {
  return std::isfinite(noiseBand) && noiseBand > 0 ? std::log1p(noiseBand) / kZ975 : 0.0;
}

double bandOfLogSigma(double sigma) { return std::isfinite(sigma) ? std::expm1(kZ975 * sigma) : kNaN; }

double bandOfRepeats(const std::vector<double>& times) { return bandOfLogSigma(sampleSd(logsOf(times))); }

double bandOfPairs(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> ratios;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (usable(a[i]) && usable(b[i])) ratios.push_back(std::log(a[i] / b[i]));
  return bandOfLogSigma(sampleSd(ratios) / std::sqrt(2.0));
}

double smallestDetectable(int pairs, double noiseBand, double minEffect) {
  if (pairs < 2 || !(std::isfinite(noiseBand) && noiseBand > 0)) return kNaN;
  const double half = tQuantile975(pairs - 1) * std::sqrt(2.0) * runLogSigma(noiseBand) / std::sqrt(double(pairs));
  return std::max(1 + minEffect, std::exp(half));
}

Verdict verdictOf(double point, double lo, double hi, double minEffect) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(point)) return Verdict::NoInterval;
  const double edge = 1 + (std::isfinite(minEffect) && minEffect > 0 ? minEffect : 0.0);
  if (lo > 1 && point >= edge) return Verdict::Faster;
  if (hi < 1 && point <= 1 / edge) return Verdict::Slower;
  return Verdict::WithinNoise;
}

bool hostChangedOverPair(const std::vector<double>& kernelMs, double checkBand) {
  const std::vector<double> timed = logsOf(kernelMs);  // ≤ 0: not timed
  if (timed.size() < 2) return false;
  const auto [lo, hi] = std::minmax_element(timed.begin(), timed.end());
  return std::expm1(*hi - *lo) > checkBand;
}

namespace {

// The pairs' log-ratios, less those the host speed check flagged (their numbers, 1-based, in `aside`).
std::vector<double> unflaggedRatios(const std::vector<double>& baseline, const std::vector<double>& variant,
                                    const std::vector<bool>& hostChanged, std::vector<int>& aside) {
  std::vector<double> out;
  for (size_t i = 0; i < std::min(baseline.size(), variant.size()); ++i) {
    if (!usable(baseline[i]) || !usable(variant[i])) continue;
    if (i < hostChanged.size() && hostChanged[i]) aside.push_back(static_cast<int>(i) + 1);
    else out.push_back(std::log(baseline[i] / variant[i]));
  }
  return out;
}

// "; pairs 2 and 4 set aside (the host speed check saw the host change speed)"
std::string asideWords(const std::vector<int>& aside) {
  if (aside.empty()) return "";
  std::string s = aside.size() == 1 ? "; pair " : "; pairs ";
  for (size_t i = 0; i < aside.size(); ++i)
    s += (i == 0 ? "" : i + 1 == aside.size() ? " and " : ", ") + std::to_string(aside[i]);
  return s + " set aside (the host speed check saw the host change speed)";
}

}  // namespace

SpeedupEstimate pairedSpeedup(const std::vector<double>& baseline, const std::vector<double>& variant,
                              const VerdictRule& rule, const std::vector<bool>& hostChanged) {
  std::vector<int> aside;
  const std::vector<double> ratios = unflaggedRatios(baseline, variant, hostChanged, aside);
  SpeedupEstimate e;
  const int n = static_cast<int>(ratios.size());
  e.set_aside = static_cast<int>(aside.size());
  e.pairs = e.baseline_runs = e.variant_runs = n + e.set_aside;
  e.min_effect = rule.min_effect;
  if (ratios.empty()) {
    e.method = e.set_aside ? "no pair left" + asideWords(aside) : "no pair with both times";
    return e;
  }
  if (n < 2) {
    e.point = std::exp(ratios.front());
    e.method = "1 pair: no interval" + asideWords(aside);
    return e;
  }
  const double floor = std::sqrt(2.0) * runLogSigma(rule.floor_band);
  const double sd = flooredSpread(sampleSd(ratios), n - 1, floor);
  e.noise_band = floor > 0 ? rule.floor_band : 0.0;
  setInterval(e, meanOf(ratios), tQuantile(1 - rule.alpha / 2, n - 1) * sd / std::sqrt(double(n)), rule);
  e.method = "mean of " + std::to_string(n) + " per-pair log-ratios, " + levelWord(e.level) + " t interval";
  if (floor > 0) e.method += " (spread steadied by this host's measured band)";
  e.method += asideWords(aside);
  return e;
}

double RoundsNoise::band() const { return df > 0 ? bandOfLogSigma(sigma) : kNaN; }

RoundsNoise roundsNoise(const std::vector<std::vector<double>>& rates) {
  RoundsNoise out;
  size_t rounds = rates.empty() ? 0 : rates.front().size();
  for (const auto& c : rates) rounds = std::min(rounds, c.size());
  const size_t cands = rates.size();
  if (cands < 2 || rounds < 2) return out;
  std::vector<double> candMean(cands, 0), roundMean(rounds, 0);
  double grand = 0;
  for (size_t c = 0; c < cands; ++c)
    for (size_t r = 0; r < rounds; ++r) {
      if (!usable(rates[c][r])) return out;
      const double l = std::log(rates[c][r]);
      candMean[c] += l / double(rounds);
      roundMean[r] += l / double(cands);
      grand += l / double(cands * rounds);
    }
  double ss = 0;
  for (size_t c = 0; c < cands; ++c)
    for (size_t r = 0; r < rounds; ++r) {
      const double e = std::log(rates[c][r]) - candMean[c] - roundMean[r] + grand;
      ss += e * e;
    }
  out.df = static_cast<int>((cands - 1) * (rounds - 1));
  out.sigma = std::sqrt(ss / out.df);
  return out;
}

SpeedupEstimate roundsRateSpeedup(const std::vector<double>& baseline, const std::vector<double>& variant,
                                  const RoundsNoise& noise, const VerdictRule& rule) {
  const std::vector<double> ratios = logRatios(variant, baseline);
  SpeedupEstimate e;
  e.pairs = e.baseline_runs = e.variant_runs = static_cast<int>(ratios.size());
  e.min_effect = rule.min_effect;
  if (ratios.empty()) {
    e.method = "no round with both rates";
    return e;
  }
  const double centre = medianOf(ratios);
  const int n = static_cast<int>(ratios.size());
  if (noise.df < 1 || n < 2 || !std::isfinite(noise.sigma)) {
    e.point = std::exp(centre);
    e.method = std::to_string(n) + (n == 1 ? " round" : " rounds") + ": no interval";
    return e;
  }
  const double t = tQuantile(1 - rule.alpha / 2, noise.df);
  setInterval(e, centre, t * std::sqrt(2.0) * noise.sigma / std::sqrt(double(n)), rule);
  e.method = "median of " + std::to_string(n) + " per-round log-ratios, " + levelWord(e.level) +
             " t interval on the rounds' pooled noise (" + std::to_string(noise.df) + " df)";
  return e;
}

SpeedupEstimate groupSpeedup(const std::vector<double>& baseline, const std::vector<double>& variant,
                             const VerdictRule& rule) {
  const std::vector<double> lb = logsOf(baseline), lv = logsOf(variant);
  SpeedupEstimate e;
  e.baseline_runs = static_cast<int>(lb.size());
  e.variant_runs = static_cast<int>(lv.size());
  e.pairs = std::min(e.baseline_runs, e.variant_runs);
  e.min_effect = rule.min_effect;
  if (lb.empty() || lv.empty()) {
    e.method = "no run with a time in one of the groups";
    return e;
  }
  const double centre = meanOf(lb) - meanOf(lv);
  const int m = e.baseline_runs, k = e.variant_runs;
  const std::string groups = runsWord(m) + " vs " + runsWord(k);
  if (m + k < 3) {
    e.point = std::exp(centre);
    e.method = "1 run each: no interval";
    return e;
  }
  double ss = 0;
  if (m > 1) ss += sumSquares(lb);
  if (k > 1) ss += sumSquares(lv);
  const int df = m + k - 2;
  const double floor = runLogSigma(rule.floor_band);
  const double sigma = flooredSpread(std::sqrt(ss / df), df, floor);
  e.noise_band = floor > 0 ? rule.floor_band : 0.0;
  setInterval(e, centre, tQuantile(1 - rule.alpha / 2, df) * sigma * std::sqrt(1.0 / m + 1.0 / k), rule);
  e.method = "difference of mean log times, " + groups + ", " + levelWord(e.level) + " pooled t interval";
  if (floor > 0) e.method += " (spread steadied by this host's measured band)";
  return e;
}

bool verdictIsClear(const SpeedupEstimate& e) {
  if (e.verdict == Verdict::Faster || e.verdict == Verdict::Slower) return true;
  if (e.verdict != Verdict::WithinNoise) return false;
  // Within noise for good: the whole interval inside the practical threshold.
  const double edge = 1 + std::max(e.min_effect, 0.0);
  return e.lo >= 1 / edge && e.hi <= edge;
}

std::string verdictWord(Verdict v) {
  switch (v) {
    case Verdict::Faster: return "faster";
    case Verdict::Slower: return "slower";
    case Verdict::WithinNoise: return "within noise";
    case Verdict::NoInterval: break;
  }
  return "1 run each: no interval";
}

std::string notMeasuredWhy(const SpeedupEstimate& e) {
  if (!e.hasInterval() || !(e.lo > 0) || e.verdict != Verdict::WithinNoise) return "";
  if (!(e.hi / e.lo > kWidestMeasured * kWidestMeasured)) return "";
  return "its " + levelWord(e.level) + " interval spans " + fmtEdge(e.lo) + "-" + fmtEdge(e.hi) + "×: too wide to tell a " +
         fmtFixed(kWidestMeasured, 0) + "× change from none";
}

std::string formatEstimate(const SpeedupEstimate& e) {
  if (!std::isfinite(e.point)) return "–";
  if (const std::string why = notMeasuredWhy(e); !why.empty()) return "not measured: " + why;
  if (!e.hasInterval()) return fmtSpeedup(e.point) + " (" + verdictWord(Verdict::NoInterval) + ")";
  // An interval with no verdict is a bound (runs cut at a cap, or never reaching the target).
  if (e.verdict == Verdict::NoInterval && !(e.lo > 0))
    return "at most " + fmtSpeedup(e.point) + " [≤ " + fmtEdge(e.hi) + "] (a bound: no verdict)";
  if (e.verdict == Verdict::NoInterval) return fmtSpeedup(e.point) + " [" + fmtEdge(e.lo) + ", " + fmtEdge(e.hi) + "] (a bound: no verdict)";
  return fmtSpeedup(e.point) + " [" + fmtEdge(e.lo) + ", " + fmtEdge(e.hi) + "] " + verdictWord(e.verdict);
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace wb::stats
