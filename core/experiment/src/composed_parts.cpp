// A try by parts: the time to target composed from its parts (composed_inputs.h).
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

double median(std::vector<double> xs) { return xs.empty() ? NAN : stats::median(xs); }

namespace {

// One value per run (NaN-free) for the log estimates.
template <typename F>
std::vector<double> perRun(const std::vector<records::RunRecord>& runs, F pick) {
  std::vector<double> xs;
  for (const auto& r : runs)
    if (auto v = pick(compare::computeMetrics(r, std::nullopt)); v && std::isfinite(*v) && *v > 0) xs.push_back(*v);
  return xs;
}

std::optional<double> startupOf(const compare::RunMetrics& m) { return m.time_to_first_step_s; }
std::optional<double> rateOf(const compare::RunMetrics& m) { return m.train_samples_per_s; }
std::optional<double> evalOf(const compare::RunMetrics& m) {
  return m.eval_ms ? std::optional<double>(*m.eval_ms / 1000.0) : std::nullopt;
}

// a / b of two arms' log estimates: the logs' standard errors added, the smaller df.
stats::LogEstimate ratioOf(const stats::LogEstimate& a, const stats::LogEstimate& b) {
  stats::LogEstimate r;
  r.value = a.value / b.value;
  r.log_se = std::hypot(a.log_se, b.log_se);
  r.df = std::min(a.df, b.df);
  return r;
}

// The variant's runs' values as a log estimate; from one run, with the spread of one reference
// run borrowed (their mean's standard error × √runs, as the samples borrow theirs:
// report/convergence.h), so the first run can be looked at.
stats::LogEstimate variantOrBorrowed(const std::vector<double>& values, const stats::LogEstimate& reference) {
  stats::LogEstimate e = stats::logEstimateOfRuns(values);
  if (values.size() == 1 && !std::isfinite(e.log_se) && reference.df >= 1 && std::isfinite(reference.df))
    e.log_se = reference.log_se * std::sqrt(reference.df + 1), e.df = reference.df;
  return e;
}

}  // namespace

double geometricMean(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += std::log(x);
  return xs.empty() ? NAN : std::exp(s / double(xs.size()));
}


BaselineTiming baselineTiming(const std::vector<records::RunRecord>& runs, const Hooks& h) {
  BaselineTiming t;
  std::vector<records::RunRecord> quiet;
  for (const auto& r : runs)
    if (!compare::computeMetrics(r, std::nullopt).contention.contended) quiet.push_back(r);
  t.slowed = runs.size() - quiet.size();
  const auto& timed = quiet.empty() ? runs : quiet;
  t.timed = timed.size();
  const auto estimate = [&](auto pick) { return variantOrBorrowed(perRun(timed, pick), stats::logEstimateOfRuns(perRun(runs, pick))); };
  t.startup = estimate(startupOf), t.rate = estimate(rateOf), t.eval = estimate(evalOf);
  if (h.log && t.timed < runs.size())
    std::fprintf(h.log, "the baseline's start-up, evaluation time and rate: from the %zu of %zu reference runs no other process slowed\n",
                 t.timed, runs.size());
  return t;
}

namespace {

// The evaluation's parts from the evaluation trials: its speed, and without reference runs the
// baseline's evaluation time and training rate (the trials' own) to weigh it.
void evaluationParts(const Inputs& in, stats::TimeToTargetParts& p, bool withReferences) {
  if (!in.evaluation) return;
  p.eval_speed = stats::logEstimateOf(in.evaluation->estimate);
  if (withReferences) return;
  p.baseline_eval_s = stats::logEstimateOfRuns(in.evaluation->baseline_eval_s.value_or(std::vector<double>{}));
  if (in.segments.unchanged())  // evaluation segments: their warm-up's; trials: their own
    p.baseline_train_samples_per_s =
        stats::exactly(geometricMean(in.evaluation->baseline_train_rates.value_or(in.evaluation->baseline_rates)));
}

// The bound of a larger global batch (samplesNeverFewer): the reference runs' samples as the least
// the variant needs; its start-up the quickest its trials took (none: free); its evaluation at
// most as much faster as it has more ranks to share it (each evaluates its shard). What it
// composes is the most the variant's time to target can be faster.
stats::TimeToTargetParts assumedBound(stats::TimeToTargetParts p, const TryOptions& o, const Inputs& in) {
  p.keepMath(stats::summariseRuns(targetRuns(in.refs->runs, *in.target), in.refs->resolution).samples);
  p.samples_bound = stats::SamplesBound::AtLeast;
  const auto& startups = in.segments.variant_startup_s;
  p.ownStartup(stats::exactly(startups && !startups->empty() ? *std::min_element(startups->begin(), startups->end()) : 0.0));
  p.eval_speed = stats::exactly(std::max(1.0, double(o.variant.speedups.devices) / double(std::max(1, o.baseline.speedups.devices))));
  return p;
}

}  // namespace

// The parts of the time to target from what was measured (see the header).
stats::TimeToTargetParts partsOf(const TryOptions& o, const Inputs& in) {
  stats::TimeToTargetParts p;
  const stats::SpeedupEstimate& seg = in.segments.estimate;
  const bool unchanged = in.segments.unchanged();
  p.throughput = unchanged ? stats::exactly(1) : stats::logEstimateOf(seg);
  if (!unchanged && std::isfinite(seg.level)) p.throughput_alpha = 1 - seg.level;  // judged at its look's α
  const int64_t perEpoch = in.train_samples > 0 ? in.train_samples : 1;
  p.samples_per_evaluation = o.baseline.train.eval_every_steps > 0
                                 ? double(o.baseline.train.eval_every_steps * samplesPerStep(o.baseline))
                                 : double(perEpoch);
  if (!in.refs || in.refs->runs.empty()) {  // the training (and a changed evaluation) over the configured length
    p.baseline_train_samples_per_s = stats::exactly(geometricMean(in.segments.baseline_rates));
    evaluationParts(in, p, false);
    p.keepMath(stats::exactly(double(perEpoch) * std::max(1, o.baseline.train.epochs)));
    return p;
  }
  const auto& refs = in.refs->runs;
  p.baseline_startup_s = in.baseline.startup;
  p.shareStartup();
  p.baseline_train_samples_per_s = in.baseline.rate;
  p.baseline_eval_s = in.baseline.eval;
  evaluationParts(in, p, true);
  if ((in.keeps && in.replay.is_null()) || in.replay_after_target) {
    p.keepMath(stats::summariseRuns(targetRuns(refs, *in.target), in.refs->resolution).samples);
    return p;
  }
  if (in.samples_assumed) return assumedBound(p, o, in);
  p.setSamples(in.samples);
  if (!in.replay.is_null()) return p;  // the reference runs themselves, cut where the rule stops them
  // Start-up and evaluations the reference runs': a change of the optimiser's numbers alone (no
  // noise of its runs'), or no run of its own yet (futileSamples asks what one would compose).
  if (in.changes.onlyArithmetic() || in.variant.empty()) return p;
  const std::vector<records::RunRecord> timed(in.variant.begin(), in.variant.begin() + long(std::min(in.variant.size(), in.timed_variant_runs)));
  if (!timed.empty()) p.ownStartup(variantOrBorrowed(perRun(timed, startupOf), p.baseline_startup_s));
  if (!in.evaluation)
    p.eval_speed = ratioOf(p.baseline_eval_s, variantOrBorrowed(perRun(timed, evalOf), p.baseline_eval_s));
  return p;
}


}  // namespace wb::experiment::detail
