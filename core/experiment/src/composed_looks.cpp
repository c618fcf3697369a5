// A try by parts: the samples to target, and the looks that settle the variant's runs (composed_inputs.h).
#include "composed_inputs.h"

#include "wb/experiment/composed_try.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <thread>

#include "wb/common/fs.h"
#include "wb/common/lr_scaling.h"
#include "wb/common/speedups.h"
#include "composed_speed.h"
#include "composed_words.h"
#include "wb/launch/tool_run.h"
#include "wb/proto/config_json.h"
#include "wb/proto/cluster_jobs.h"
#include "wb/proto/experiment_events.h"
#include "wb/proto/run_status.h"
#include "wb/compare/compare.h"
#include "wb/stats/estimate_json.h"
#include "wb/records/host.h"
#include "wb/records/math_record.h"
#include "wb/records/speed_record.h"
#include "wb/stats/time_to_target_json.h"
#include "wb/stats/variant_looks.h"
#include "wb/report/whatif.h"
#include "wb/proto/record_files.h"

namespace wb::experiment::detail {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Early stopping replayed on the reference runs (report::replayEarlyStopping): each run as the
// variant would have trained it, to the target as the reference did when the rule stops it after
// the target, else never reaching it (a bound: at least the reference's samples).
void replayStops(const TryOptions& o, Inputs& in, const stats::SamplesRule& rule) {
  const auto reference = targetRuns(in.refs->runs, *in.target);
  std::vector<stats::TargetRun> replayed;
  json runs = json::array();
  in.replay_after_target = true;
  for (size_t i = 0; i < reference.size(); ++i) {
    const records::RunRecord& run = in.refs->runs[i];
    const report::ReplayedStop stop = report::replayEarlyStopping(run, o.variant.speedups.early_stopping);
    stats::TargetRun r = reference[i];
    const bool first = !stop.stops || (r.reached && !(r.samples > stop.samples));
    // Cut before the target, the run never reaches it: it needs at least what the reference needed
    // (a bound from the reference's own count, never below it: early stopping cannot be faster).
    if (!first) r = stats::TargetRun{std::max(stop.samples, r.samples), false, r.seed};
    in.replay_after_target = in.replay_after_target && first;
    replayed.push_back(r);
    const double last = run.evals.empty() ? NAN : double(run.evals.back().samples);
    runs.push_back({{"seed", r.seed}, {"stops", stop.stops}, {"stop_epoch", stop.epoch},
                    {"stop_samples", std::isfinite(stop.samples) ? json(stop.samples) : json()},
                    {"fraction_of_run", stop.stops && last > 0 ? json(stop.samples / last) : json(1.0)},
                    {"target_first", first}, {"reason", stop.reason}});
  }
  in.replay = {{"rule", proto::configToJson(o.variant)["speedups"]["early_stopping"]}, {"runs", runs}};
  in.samples = stats::compareSamples(reference, replayed, rule);
}

// For a question that is only "faster?" (futility), the samples past which the look at run k
// (a wave's first) stops the runs without calling the variant faster, whatever the run needed: at
// those samples a run reaching the target would stop them so (settlesNotFaster; the seeds' scatter
// counted: stats::VariantLooks), and a run cut there bounds the time to target to under the
// threshold even were its start-up and evaluations kFutileQuicker times quicker than those composed
// (the variant's runs before it, else the reference runs', which may have run side by side). After
// a run cut so, the looks see a bound and stop on it ("slower bound" too). `cap` when no point
// under it is such.
constexpr double kFutileQuicker = 1.25;
// A look that stops the runs without calling the variant faster ("cannot be faster", a bound below
// the threshold, clearly slower, negligible); "all runs" is not a stop that settles.
bool settlesNotFaster(stats::LookStop stop, const stats::TimeToTargetEstimate& e) {
  return stop != stats::LookStop::Continue && stop != stats::LookStop::AllRuns && e.speedup.verdict != stats::Verdict::Faster;
}
double futileSamples(const TryOptions& o, const ComposedOptions& c, Inputs in, const std::vector<stats::TargetRun>& reference,
                     const stats::SamplesRule& rule, double cap, int k) {
  const stats::VariantLooks looks{c.variant_runs, o.policy.min_effect, true};
  const std::vector<stats::TargetRun> before = targetRuns(in.variant, *in.target);
  in.rule = looks.ruleAt(k);
  const auto parts = [&](double samples, bool reached) {
    std::vector<stats::TargetRun> runs = before;
    runs.push_back({samples, reached, 0});
    in.samples = stats::compareSamples(reference, runs, rule);
    return partsOf(o, in);
  };
  const auto cannotBeFaster = [&](double samples) {
    stats::TimeToTargetParts cut = parts(samples, false);
    stats::LogEstimate quicker = cut.variant_startup_s;
    quicker.value /= kFutileQuicker;
    cut.ownStartup(quicker);
    cut.eval_speed.value *= kFutileQuicker;
    const double point = stats::composeTimeToTarget(cut, in.rule).speedup.point;
    if (!(std::isfinite(point) && point < 1 + std::max(o.policy.min_effect, 0.0))) return false;
    const stats::TimeToTargetEstimate reached = stats::composeTimeToTarget(parts(samples, true), in.rule);
    return settlesNotFaster(looks.stopAfter(k, reached), reached);
  };
  double lo = 0, hi = cap;  // a run cut at lo may still be faster; one cut at hi cannot
  if (!(hi > 0) || !cannotBeFaster(hi)) return cap;
  for (int i = 0; i < 40 && hi - lo > 1e-3 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (cannotBeFaster(mid) ? hi : lo) = mid;
  }
  return hi;
}

// The cap of the wave from run k: futileSamples when it comes first (said), else the plan's.
double waveCap(const TryOptions& o, const ComposedOptions& c, const VariantPlan& p, const std::vector<stats::TargetRun>& reference,
               const stats::SamplesRule& rule, const Inputs& in, int k, const Hooks& h) {
  if (!p.futile_cap) return p.cap_samples;
  const double futile = futileSamples(o, c, in, reference, rule, p.cap_samples, k);
  if (!(futile < p.cap_samples)) return p.cap_samples;
  if (h.log)
    std::fprintf(h.log, "%s at %.0f samples (%s the reference runs'), not %.0f: not at the target by then, it cannot be faster\n",
                 k == 1 ? "the variant's first run stops" : ("the variant's runs from run " + std::to_string(k) + " on stop").c_str(), futile,
                 wb::fmtSpeedup(futile * c.cap / p.cap_samples).c_str(), p.cap_samples);
  return futile;
}

// The variant's runs, each look composing the time to target at its share of the false-alarm rate
// (stats::VariantLooks), until a look settles it or all `variant_runs` ran. The first runs alone;
// then `at_once` side by side, looked at in seed order as if they had run one after another: a run
// past the look that settles it is kept in its folder (try.json's looks: "beyond") but not counted,
// so the answer is the one they would give in turn. Side by side they slow each other: the
// variant's start-up and evaluation time are then its first run's (timed_variant_runs).
Status lookedAtVariantRuns(const TryOptions& o, const ComposedOptions& c, const VariantPlan& p,
                           const std::vector<stats::TargetRun>& reference, Inputs& in, const Hooks& h) {
  stats::SamplesRule rule;
  rule.min_effect = o.policy.min_effect;
  rule.resolution = in.refs->resolution;
  const stats::VariantLooks looks{c.variant_runs, o.policy.min_effect, c.futility};
  if (p.at_once > 1) in.timed_variant_runs = 1;
  stats::LookStop stop = stats::LookStop::Continue;
  json beyond = json::array();
  double cap = p.cap_samples;
  for (int k = 1; k <= c.variant_runs && stop == stats::LookStop::Continue;) {
    const int n = k == 1 ? 1 : std::min(p.at_once, c.variant_runs - k + 1);
    if (h.log && k > 1 && (n > 1 || p.elsewhere))
      std::fprintf(h.log, "the variant's runs %d-%d %s (their samples to target only)\n", k, k + n - 1,
                   p.elsewhere ? "as one job array" : "side by side");
    detail::phase(h, kVariantPhase, k - 1, c.variant_runs);
    VariantPlan capped = p;
    capped.cap_samples = waveCap(o, c, p, reference, rule, in, k, h);
    cap = capped.cap_samples;
    auto wave = variantWave(o, capped, h, k - 1, n);
    if (!wave.ok()) return wave.error();
    for (auto& run : *wave) {
      if (stop != stats::LookStop::Continue) {
        beyond.push_back(run.dir);
        continue;
      }
      in.variant.push_back(std::move(run));
      in.samples = stats::compareSamples(reference, targetRuns(in.variant, *in.target), rule);
      in.rule = looks.ruleAt(k);
      stop = looks.stopAfter(k++, stats::composeTimeToTarget(partsOf(o, in), in.rule));
    }
  }
  in.looks = {{"max_runs", c.variant_runs}, {"runs", int(in.variant.size())}, {"stopped", stats::lookStopName(stop)},
              {"alpha", in.rule.alpha}, {"at_once", p.at_once}, {"beyond", beyond},
              {"cap_samples", cap}, {"cap", cap < p.cap_samples ? "cannot be faster past it" : "cap x the reference runs'"}};
  if (h.log && int(in.variant.size()) < c.variant_runs)
    std::fprintf(h.log, "the variant's runs stop after %zu of %d: %s\n", in.variant.size(), c.variant_runs,
                 stats::lookStopName(stop).c_str());
  return {};
}

// For a question that is only "faster?" (futility): a larger global batch whose throughput is too
// slow for it to be faster even needing no more samples than the baseline (assumedBound) is
// answered by that bound, without a run to the target.
bool settledByTheBound(const TryOptions& o, const ComposedOptions& c, Inputs& in, const Hooks& h) {
  if (!c.futility || !samplesNeverFewer(o) || in.segments.contended) return false;
  in.samples_assumed = true;
  const stats::TimeToTargetEstimate e = stats::composeTimeToTarget(partsOf(o, in), in.rule);
  in.samples_assumed = std::isfinite(e.speedup.hi) && e.speedup.hi < 1 + o.policy.min_effect;
  if (!in.samples_assumed) return false;
  in.looks = {{"max_runs", c.variant_runs}, {"runs", 0}, {"stopped", stats::lookStopName(stats::LookStop::CannotBeFaster)},
              {"assumed", "samples to target no fewer than the baseline's"}};
  if (h.log)
    std::fprintf(h.log, "no run to the target: a larger global batch that needed no more samples would still be at most %s as fast\n",
                 wb::fmtSpeedup(e.speedup.hi).c_str());
  return true;
}

}  // namespace

// Whether another process used the CPU while the throughput (or the evaluation's time) was
// measured: the try then gives no verdict, whatever the samples to the target (composedRecord).
bool throughputContended(const Inputs& in) { return in.segments.contended || (in.evaluation && in.evaluation->contended); }

namespace {

// For a question that is only "faster?" (futility), a throughput measured under contention leaves
// no verdict for the variant's runs to the target to help: none is started (try.json's samples
// and looks say why). A try asked "by how much?" still runs them: their samples are the host's
// load's no more than the reference runs' are.
bool settledByContention(const ComposedOptions& c, Inputs& in, const Hooks& h) {
  if (!c.futility || !throughputContended(in)) return false;
  in.samples_not_run = true;
  in.looks = {{"max_runs", c.variant_runs}, {"runs", 0}, {"stopped", kStoppedContended}};
  if (h.log)
    std::fprintf(h.log, "no run to the target: another process used the CPU while the throughput was measured, so there is "
                        "no verdict for them to give\n");
  return true;
}

}  // namespace

Status measureSamples(const TryOptions& o, const ComposedOptions& c, Inputs& in, const Hooks& h) {
  if (in.changes.has(Part::Replay) && in.refs && in.target) {
    stats::SamplesRule rule;
    rule.min_effect = o.policy.min_effect;
    rule.resolution = in.refs->resolution;
    replayStops(o, in, rule);
    return {};
  }
  if (in.keeps || !in.refs) return {};
  if (!in.target) return makeError(Errc::InvalidConfig, "the reference runs evaluated nothing: no target accuracy to train to");
  const auto reference = targetRuns(in.refs->runs, *in.target);
  std::vector<double> reached;
  for (const auto& r : reference) if (std::isfinite(r.samples)) reached.push_back(r.samples);
  VariantPlan p;
  p.target = *in.target;
  p.resolution = in.refs->resolution;
  p.cap_samples = c.cap * geometricMean(reached);
  p.train_samples = in.train_samples;
  p.threads = referenceThreads(in.refs->runs);
  p.at_once = c.variant_parallel > 0 ? c.variant_parallel : referenceParallel(o.variant, in.math.device == "cpu", c.variant_runs);
  if (c.variant_runs_on && c.variant_parallel != 1) {  // a cluster's array: the rest at once (or N), as many as it gives
    p.elsewhere = c.variant_runs_on(o.out / proto::kClusterArrayFolder);
    p.at_once = c.variant_parallel > 1 ? c.variant_parallel : std::max(1, c.variant_runs - 1);
  }
  if (settledByContention(c, in, h) || settledByTheBound(o, c, in, h)) return {};
  p.futile_cap = c.futility && capEndsTheRun(o.variant, in.train_samples);
  return lookedAtVariantRuns(o, c, p, reference, in, h);
}

}  // namespace wb::experiment::detail
