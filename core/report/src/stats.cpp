#include "wb/report/stats.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "wb/report/table.h"

namespace wb::report {

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

// Fills point/lo/hi/verdict from a centre and half width on the log scale.
void setInterval(SpeedupEstimate& e, double centre, double halfWidth, double noiseBand) {
  e.point = std::exp(centre);
  e.noise_band = std::isfinite(noiseBand) && noiseBand > 0 ? noiseBand : 0.0;
  e.lo = std::exp(centre - halfWidth);
  e.hi = std::exp(centre + halfWidth);
  e.verdict = verdictOf(e.lo, e.hi, noiseBand);
}

// ln(num[i] / den[i]) for each i both have, skipping a value that is not finite and > 0.
std::vector<double> logRatios(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> out;
  for (size_t i = 0; i < std::min(num.size(), den.size()); ++i)
    if (usable(num[i]) && usable(den[i])) out.push_back(std::log(num[i] / den[i]));
  return out;
}

std::string runsWord(int n) { return std::to_string(n) + (n == 1 ? " run" : " runs"); }

std::string fmt2(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

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

double smallestDetectable(int pairs, double noiseBand) {
  if (pairs < 1 || !(std::isfinite(noiseBand) && noiseBand > 0)) return kNaN;
  const double q = pairs == 1 ? kZ975 : tQuantile975(pairs - 1);
  return (1 + noiseBand) * std::exp(q * std::sqrt(2.0) * runLogSigma(noiseBand) / std::sqrt(double(pairs)));
}

Verdict verdictOf(double lo, double hi, double noiseBand) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return Verdict::NoInterval;
  const double edge = 1 + (std::isfinite(noiseBand) && noiseBand > 0 ? noiseBand : 0.0);
  if (lo > edge) return Verdict::Faster;
  if (hi < 1 / edge) return Verdict::Slower;
  return Verdict::WithinNoise;
}

SpeedupEstimate pairedSpeedup(const std::vector<double>& baseline, const std::vector<double>& variant,
                              double noiseBand) {
  const std::vector<double> ratios = logRatios(baseline, variant);
  SpeedupEstimate e;
  e.pairs = e.baseline_runs = e.variant_runs = static_cast<int>(ratios.size());
  if (ratios.empty()) {
    e.method = "no pair with both times";
    return e;
  }
  const double centre = medianOf(ratios);
  const int n = static_cast<int>(ratios.size());
  if (n < 2) {
    e.point = std::exp(centre);
    e.method = "1 pair: no interval";
    return e;
  }
  const double floor = std::sqrt(2.0) * runLogSigma(noiseBand);
  const double sd = std::max(sampleSd(ratios), floor);
  setInterval(e, centre, tQuantile975(n - 1) * sd / std::sqrt(double(n)), noiseBand);
  e.method = "median of " + std::to_string(n) + " per-pair log-ratios, 95% t interval";
  if (floor > 0) e.method += " (spread at least this host's)";
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
                                  const RoundsNoise& noise, double noiseBand) {
  const std::vector<double> ratios = logRatios(variant, baseline);
  SpeedupEstimate e;
  e.pairs = e.baseline_runs = e.variant_runs = static_cast<int>(ratios.size());
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
  setInterval(e, centre, tQuantile975(noise.df) * std::sqrt(2.0) * noise.sigma / std::sqrt(double(n)), noiseBand);
  e.method = "median of " + std::to_string(n) + " per-round log-ratios, 95% t interval on the rounds' pooled noise (" +
             std::to_string(noise.df) + " df)";
  return e;
}

SpeedupEstimate groupSpeedup(const std::vector<double>& baseline, const std::vector<double>& variant,
                             double noiseBand) {
  const std::vector<double> lb = logsOf(baseline), lv = logsOf(variant);
  SpeedupEstimate e;
  e.baseline_runs = static_cast<int>(lb.size());
  e.variant_runs = static_cast<int>(lv.size());
  e.pairs = std::min(e.baseline_runs, e.variant_runs);
  if (lb.empty() || lv.empty()) {
    e.method = "no run with a time in one of the groups";
    return e;
  }
  const double centre = medianOf(lb) - medianOf(lv);
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
  const double sigma = std::max(std::sqrt(ss / df), runLogSigma(noiseBand));
  setInterval(e, centre, tQuantile975(df) * sigma * std::sqrt(1.0 / m + 1.0 / k), noiseBand);
  e.method = "difference of median log times, " + groups + ", 95% pooled t interval";
  if (noiseBand > 0) e.method += " (spread at least this host's)";
  return e;
}

bool verdictIsClear(const SpeedupEstimate& e) {
  if (e.verdict == Verdict::Faster || e.verdict == Verdict::Slower) return true;
  if (e.verdict != Verdict::WithinNoise || !(e.noise_band > 0)) return false;
  // Within noise for good: the whole interval sits inside the band.
  const double edge = 1 + e.noise_band;
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

std::string formatEstimate(const SpeedupEstimate& e) {
  if (!std::isfinite(e.point)) return "–";
  if (!e.hasInterval()) return fmtSpeedup(e.point) + " (" + verdictWord(Verdict::NoInterval) + ")";
  return fmtSpeedup(e.point) + " [" + fmt2(e.lo) + ", " + fmt2(e.hi) + "] " + verdictWord(e.verdict);
}

}  // namespace wb::report
