#include "wb/stats/verdict_sim.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>


namespace wb::stats {
using nlohmann::json;

namespace {

double medianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Reads one run of a trace file; an error names the run and the field.
Result<TraceRun> runFromJson(const json& j, size_t index) {
  TraceRun r;
  if (!j.is_object() || !j.contains("train_samples_per_s") || !j["train_samples_per_s"].is_number() ||
      !(j["train_samples_per_s"].get<double>() > 0))
    return makeError(Errc::InvalidConfig, "runs[" + std::to_string(index) + "].train_samples_per_s must be a number > 0");
  r.train_samples_per_s = j["train_samples_per_s"].get<double>();
  r.t_s = j.value("t_s", 0.0);
  r.run_wall_s = j.value("run_wall_s", 0.0);
  r.kernel_before_ms = j.value("kernel_before_ms", 0.0);
  r.kernel_after_ms = j.value("kernel_after_ms", 0.0);
  return r;
}

int mostPairs(const Sequential& seq) { return seq.fixed_pairs > 0 ? seq.fixed_pairs : seq.max_pairs; }

// One simulated experiment: runs from `start` (wrapping), pairs in order, bit k of variantFirst
// says whether pair k's first run is the variant; stops as the runner does (a pair the host speed
// check sets aside still spends its look, and is replaced, up to seq.replaced_pairs). Returns the
// last estimate.
SpeedupEstimate simulateOne(const RunTrace& trace, size_t start, double effect, const Sequential& seq,
                            uint64_t variantFirst) {
  const int most = mostPairs(seq);
  std::vector<double> ref, var;
  std::vector<bool> hostChanged;
  SpeedupEstimate e;
  const size_t n = trace.runs.size();
  int usable = 0;
  for (int k = 0; k < most + seq.replaced_pairs && usable < most; ++k) {
    const TraceRun& first = trace.runs[(start + 2 * k) % n];
    const TraceRun& second = trace.runs[(start + 2 * k + 1) % n];
    const bool variantIsFirst = (variantFirst >> k) & 1;
    const TraceRun& a = variantIsFirst ? second : first;
    const TraceRun& b = variantIsFirst ? first : second;
    ref.push_back(1.0 / a.train_samples_per_s);
    var.push_back(1.0 / b.train_samples_per_s / (1.0 + effect));
    hostChanged.push_back(hostChangedOverPair(
        {a.kernel_before_ms, a.kernel_after_ms, b.kernel_before_ms, b.kernel_after_ms}, kAssumedKernelBand));
    usable += hostChanged.back() ? 0 : 1;
    if (seq.fixed_pairs > 0 && usable < seq.fixed_pairs && k + 1 < most + seq.replaced_pairs) continue;
    e = pairedSpeedup(ref, var, seq.at(k + 1), hostChanged);
    if (seq.fixed_pairs == 0 && verdictIsClear(e)) break;
  }
  return e;
}

void count(SimOutcome& o, const SpeedupEstimate& e, double& pairs) {
  ++o.experiments;
  pairs += e.pairs;
  o.set_aside += e.set_aside;
  switch (e.verdict) {
    case Verdict::Faster: ++o.faster; break;
    case Verdict::Slower: ++o.slower; break;
    case Verdict::WithinNoise: ++o.within; break;
    case Verdict::NoInterval: ++o.no_interval; break;
  }
}

// The time-weighted share of [t0, t1) a host spends fast, its speed flipping at `flips` (sorted,
// starting fast at flips[0]).
double fastShare(const std::vector<double>& flips, double t0, double t1) {
  double fast = 0;
  size_t i = std::upper_bound(flips.begin(), flips.end(), t0) - flips.begin();
  i = i > 0 ? i - 1 : 0;
  for (; i + 1 < flips.size() && flips[i] < t1; ++i) {
    const double a = std::max(t0, flips[i]), b = std::min(t1, flips[i + 1]);
    if (b > a && i % 2 == 0) fast += b - a;
  }
  return fast / (t1 - t0);
}

// The quiet trace's scatter: each run's rate over the median, and its median wall time and kernel.
struct Scatter {
  std::vector<double> factors;
  double runS = 15.0, kernelMs = 0;
};

Scatter scatterOf(const RunTrace& quiet) {
  std::vector<double> rates, walls, kernels;
  for (const auto& r : quiet.runs) {
    rates.push_back(r.train_samples_per_s);
    if (r.run_wall_s > 0) walls.push_back(r.run_wall_s);
    if (r.kernel_before_ms > 0) kernels.push_back(r.kernel_before_ms);
  }
  Scatter s;
  const double level = medianOf(rates);
  for (double r : rates) s.factors.push_back(r / level);
  if (!walls.empty()) s.runS = medianOf(walls);
  if (!kernels.empty()) s.kernelMs = medianOf(kernels);
  return s;
}

std::string pctWord(double x) { return std::to_string(int(std::lround(x * 100))) + " %"; }

}  // namespace

json traceJson(const RunTrace& trace) {
  json runs = json::array();
  for (const auto& r : trace.runs)
    runs.push_back({{"t_s", r.t_s}, {"train_samples_per_s", r.train_samples_per_s}, {"run_wall_s", r.run_wall_s},
                    {"kernel_before_ms", r.kernel_before_ms}, {"kernel_after_ms", r.kernel_after_ms}});
  return {{"v", 1}, {"kind", "run-trace"}, {"source", trace.source}, {"runs", runs}};
}

Result<RunTrace> loadTrace(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return makeError(Errc::Io, file.string() + ": cannot read it");
  json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("kind", std::string()) != "run-trace" ||
      !doc.contains("runs") || !doc["runs"].is_array())
    return makeError(Errc::InvalidConfig, file.string() + ": not a run trace (kind \"run-trace\" with runs[])");
  RunTrace t;
  t.source = doc.value("source", std::string());
  for (size_t i = 0; i < doc["runs"].size(); ++i) {
    auto r = runFromJson(doc["runs"][i], i);
    if (!r.ok()) return makeError(r.error().code, file.string() + ": " + r.error().message);
    t.runs.push_back(*r);
  }
  if (t.runs.size() < 4) return makeError(Errc::InvalidConfig, file.string() + ": a trace needs at least 4 runs");
  return t;
}

RunTrace quietTrace(double rate, double band, double runS, double kernelMs, int runs, uint64_t seed,
                    const std::string& source) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> scatter(0.0, runLogSigma(band));
  RunTrace t;
  t.source = source;
  for (int i = 0; i < runs; ++i)
    t.runs.push_back({i * runS, rate * std::exp(scatter(rng)), runS, kernelMs, kernelMs});
  return t;
}

RunTrace twoSpeedTrace(const RunTrace& quiet, double fastRate, double slowRate, double minStretchS, int runs,
                       uint64_t seed) {
  const Scatter sc = scatterOf(quiet);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, sc.factors.size() - 1);
  std::exponential_distribution<double> beyond(1.0 / std::max(minStretchS, 1.0));
  // The host's speed over time: alternating stretches, each at least minStretchS.
  std::vector<double> flips{0};  // the times the speed flips, starting fast
  const double runS = sc.runS, total = runS * runs;
  while (flips.back() < total) flips.push_back(flips.back() + minStretchS + beyond(rng));
  RunTrace out;
  out.source = "built: two speeds (" + std::to_string(int(fastRate)) + " and " + std::to_string(int(slowRate)) +
               " samples/s, stretches of at least " + std::to_string(int(minStretchS)) + " s) from " + quiet.source;
  for (int i = 0; i < runs; ++i) {
    const double t0 = i * runS, f = fastShare(flips, t0, t0 + runS);
    const double hostRate = 1.0 / (f / fastRate + (1 - f) / slowRate);  // time-weighted
    TraceRun r;
    r.t_s = t0;
    r.run_wall_s = runS;
    r.train_samples_per_s = hostRate * sc.factors[pick(rng)];
    r.kernel_before_ms = sc.kernelMs * fastRate / (fastShare(flips, t0, t0 + 0.01) > 0.5 ? fastRate : slowRate);
    r.kernel_after_ms =
        sc.kernelMs * fastRate / (fastShare(flips, t0 + runS - 0.01, t0 + runS) > 0.5 ? fastRate : slowRate);
    out.runs.push_back(r);
  }
  return out;
}

RunTrace noiseTrace(double sd, int runs, uint64_t seed) {
  constexpr double kRate = 16500, kRunS = 6.2, kKernelMs = 2.57, kKernelSd = 0.01;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> scatter(0.0, sd), kernel(0.0, kKernelSd);
  RunTrace t;
  t.source = "built: plain noise, runs' sd " + pctWord(sd);
  for (int i = 0; i < runs; ++i)
    t.runs.push_back({i * kRunS, kRate * std::exp(scatter(rng)), kRunS, kKernelMs * std::exp(kernel(rng)),
                      kKernelMs * std::exp(kernel(rng))});
  return t;
}

RunTrace flipTrace(const RunTrace& quiet, double fastRate, double slowRate, double flipP, int runs, uint64_t seed,
                   bool checkSeesIt) {
  const Scatter sc = scatterOf(quiet);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, sc.factors.size() - 1);
  std::bernoulli_distribution flip(flipP);
  std::normal_distribution<double> kernelNoise(0.0, 0.01);
  RunTrace out;
  out.source = "built: two speeds (" + std::to_string(int(fastRate)) + " / " + std::to_string(int(slowRate)) +
               " samples/s), flipping between runs " + pctWord(flipP) + " of the time" +
               (checkSeesIt ? "" : ", unseen by the kernel check");
  bool fast = true;
  for (int i = 0; i < runs; ++i) {
    if (i > 0 && flip(rng)) fast = !fast;
    const double speed = fast ? 1.0 : slowRate / fastRate;
    const double kernel = sc.kernelMs / (checkSeesIt ? speed : 1.0);
    out.runs.push_back({i * sc.runS, (fast ? fastRate : slowRate) * sc.factors[pick(rng)], sc.runS,
                        kernel * std::exp(kernelNoise(rng)), kernel * std::exp(kernelNoise(rng))});
  }
  return out;
}

SimOutcome simulateExperiments(const RunTrace& trace, double effect, const Sequential& seq, int experiments,
                               uint64_t seed) {
  SimOutcome o;
  const size_t n = trace.runs.size(), window = 2 * size_t(mostPairs(seq));
  if (n < 2 || window > 62) return o;
  double pairs = 0;
  if (experiments == kEveryWindow) {
    o.shared_runs = true;
    for (size_t start = 0; start < n; ++start)
      for (uint64_t mask = 0; mask < (uint64_t(1) << (window / 2)); ++mask)
        count(o, simulateOne(trace, start, effect, seq, mask), pairs);
  } else {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<size_t> start(0, n - 1);
    o.shared_runs = n < window * size_t(experiments);
    for (int i = 0; i < experiments; ++i) {
      const size_t at = o.shared_runs ? start(rng) : window * size_t(i);
      count(o, simulateOne(trace, at, effect, seq, rng()), pairs);
    }
  }
  o.mean_pairs = o.experiments ? pairs / o.experiments : 0;
  return o;
}

double detectableEffect(const RunTrace& trace, const Sequential& seq, double power, int experiments, uint64_t seed) {
  auto powerAt = [&](double effect) {
    const SimOutcome o = simulateExperiments(trace, effect, seq, experiments, seed);
    return o.rate(o.faster);
  };
  double lo = 0.005, hi = 2.0;
  if (powerAt(hi) < power) return std::nan("");
  if (powerAt(lo) >= power) return lo;
  for (int i = 0; i < 20 && hi / lo > 1.005; ++i) {
    const double mid = std::sqrt(lo * hi);
    (powerAt(mid) >= power ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace wb::stats
