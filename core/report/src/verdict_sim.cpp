#include "wb/report/verdict_sim.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

namespace wb::report {
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

// One simulated experiment: runs from `start` (wrapping), pairs in order, the variant of each
// pair drawn at random; stops as the runner does. Returns the last estimate.
SpeedupEstimate simulateOne(const RunTrace& trace, size_t start, double effect, const Sequential& seq,
                            std::mt19937_64& rng) {
  const int most = seq.fixed_pairs > 0 ? seq.fixed_pairs : seq.max_pairs;
  std::vector<double> ref, var;
  SpeedupEstimate e;
  std::bernoulli_distribution coin(0.5);
  const size_t n = trace.runs.size();
  for (int k = 0; k < most; ++k) {
    const TraceRun& first = trace.runs[(start + 2 * k) % n];
    const TraceRun& second = trace.runs[(start + 2 * k + 1) % n];
    const bool variantFirst = coin(rng);
    const TraceRun& a = variantFirst ? second : first;
    const TraceRun& b = variantFirst ? first : second;
    ref.push_back(1.0 / a.train_samples_per_s);
    var.push_back(1.0 / b.train_samples_per_s / (1.0 + effect));
    const int pairs = k + 1;
    if (seq.fixed_pairs > 0 && pairs < seq.fixed_pairs) continue;
    e = pairedSpeedup(ref, var, seq.at(pairs));
    if (seq.fixed_pairs == 0 && verdictIsClear(e)) break;
  }
  return e;
}

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
  std::vector<double> rates, walls, kernels;
  for (const auto& r : quiet.runs) {
    rates.push_back(r.train_samples_per_s);
    if (r.run_wall_s > 0) walls.push_back(r.run_wall_s);
    if (r.kernel_before_ms > 0) kernels.push_back(r.kernel_before_ms);
  }
  const double level = medianOf(rates), runS = walls.empty() ? 15.0 : medianOf(walls);
  const double kernel = kernels.empty() ? 0.0 : medianOf(kernels);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, rates.size() - 1);
  std::exponential_distribution<double> beyond(1.0 / std::max(minStretchS, 1.0));
  // The host's speed over time: alternating stretches, each at least minStretchS.
  std::vector<double> flips{0};  // the times the speed flips, starting fast
  const double total = runS * runs;
  while (flips.back() < total) flips.push_back(flips.back() + minStretchS + beyond(rng));
  auto fastShare = [&](double t0, double t1) {  // the share of [t0, t1) spent at the fast speed
    double fast = 0;
    for (size_t i = 0; i + 1 < flips.size(); ++i) {
      const double a = std::max(t0, flips[i]), b = std::min(t1, flips[i + 1]);
      if (b > a && i % 2 == 0) fast += b - a;
    }
    return fast / (t1 - t0);
  };
  RunTrace out;
  out.source = "built: two speeds (" + std::to_string(int(fastRate)) + " and " + std::to_string(int(slowRate)) +
               " samples/s, stretches of at least " + std::to_string(int(minStretchS)) + " s) from " + quiet.source;
  for (int i = 0; i < runs; ++i) {
    const double t0 = i * runS, f = fastShare(t0, t0 + runS);
    const double hostRate = 1.0 / (f / fastRate + (1 - f) / slowRate);  // time-weighted
    TraceRun r;
    r.t_s = t0;
    r.run_wall_s = runS;
    r.train_samples_per_s = hostRate * rates[pick(rng)] / level;
    r.kernel_before_ms = kernel * fastRate / (fastShare(t0, t0 + 0.01) > 0.5 ? fastRate : slowRate);
    r.kernel_after_ms = kernel * fastRate / (fastShare(t0 + runS - 0.01, t0 + runS) > 0.5 ? fastRate : slowRate);
    out.runs.push_back(r);
  }
  return out;
}

SimOutcome simulateExperiments(const RunTrace& trace, double effect, const Sequential& seq, int experiments,
                               uint64_t seed) {
  SimOutcome o;
  if (trace.runs.size() < 2) return o;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> start(0, trace.runs.size() - 1);
  double pairs = 0;
  for (int i = 0; i < experiments; ++i) {
    const SpeedupEstimate e = simulateOne(trace, start(rng), effect, seq, rng);
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

}  // namespace wb::report
