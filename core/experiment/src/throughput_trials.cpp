#include "throughput_trials.h"

#include <algorithm>
#include <limits>

#include "wb/proto/config_json.h"
#include "wb/compare/compare.h"
#include "wb/stats/estimate_json.h"
#include "wb/records/host.h"

namespace wb::experiment::detail {
using nlohmann::json;

namespace {

// A trial: the config cut at `steps` training steps, with no early stop. A throughput trial gets
// a small validation split (its one evaluation is not in the throughput); an evaluation trial keeps
// the configured one and evaluates kEvalTrialEvaluations times.
Config trialConfig(Config c, const TrialsOptions& o, const std::string& who) {
  c.name += " (" + who + (o.evaluation ? " evaluation trial)" : " trial)");
  c.train.max_steps = o.steps;
  c.train.epochs = std::max(c.train.epochs, 1000);
  c.train.eval_every_steps = o.evaluation ? std::max<int64_t>(1, o.steps / kEvalTrialEvaluations) : 0;
  c.train.stop_at_accuracy = 0;
  if (!o.evaluation) c.data.limit_val = c.data.limit_val > 0 ? std::min<int64_t>(c.data.limit_val, 256) : 256;
  c.speedups.early_stopping.patience = 0;
  return c;
}

template <typename F>
std::vector<double> perCounted(const std::vector<records::RunRecord>& runs, const VariantRuns& v, F pick) {
  std::vector<double> xs;
  for (size_t i = 0; i < runs.size(); ++i)
    if (v.counted(i))
      if (auto x = pick(compare::computeMetrics(runs[i], std::nullopt)); x && *x > 0) xs.push_back(*x);
  return xs;
}

std::vector<double> ratesOf(const std::vector<records::RunRecord>& runs, const VariantRuns& v) {
  return perCounted(runs, v, [](const compare::RunMetrics& m) { return m.train_samples_per_s; });
}

std::vector<double> evalSecondsOf(const std::vector<records::RunRecord>& runs, const VariantRuns& v) {
  return perCounted(runs, v, [](const compare::RunMetrics& m) {
    return m.eval_ms ? std::optional<double>(*m.eval_ms / 1000.0) : std::nullopt;
  });
}

// One evaluation's time, baseline over variant, from the counted pairs (as the pairs' throughput).
stats::SpeedupEstimate evaluationSpeed(const VariantRuns& v, const stats::VerdictRule& rule) {
  std::vector<double> ref, var;
  std::vector<bool> flips;
  const double band = records::loadNoise(records::thisMachine()).hostKernelBand();
  for (size_t i = 0; i < v.pairs.size(); ++i) {
    if (!v.counted(i)) continue;
    const auto a = compare::computeMetrics(v.references[i], std::nullopt).eval_ms;
    const auto b = compare::computeMetrics(v.variants[i], std::nullopt).eval_ms;
    if (!a || !b || *a <= 0 || *b <= 0) continue;
    ref.push_back(*a), var.push_back(*b), flips.push_back(compare::hostChangedOverRuns(v.references[i], v.variants[i], band));
  }
  return stats::pairedSpeedup(ref, var, rule, flips);
}

}  // namespace

Result<records::SpeedRecord> measureTrials(const TrialsOptions& o, const Hooks& hooks) {
  Plan p;
  p.steps = 2;
  p.reference = {"baseline", "the baseline", "00-baseline", 0, trialConfig(o.baseline, o, "baseline")};
  p.variants.push_back({"variant", "the variant", "01-variant", 1, trialConfig(o.variant, o, "variant")});
  Policy policy;
  // Throughput trials stop at the second pair when its verdict is already clear (each look
  // spending its share); evaluation trials take all their pairs (their estimate is not the pairs').
  if (o.evaluation || (o.all_pairs && !o.slower_settles)) policy.fixed_pairs = kTrialPairs;
  policy.settle_only_slower = !o.evaluation && o.all_pairs && o.slower_settles;
  policy.max_pairs = kTrialPairs;
  policy.settle_on_throughput = true;
  policy.budget_s = std::numeric_limits<double>::infinity();  // three pairs at most, however long
  policy.min_effect = o.min_effect;
  policy.target_acc = 0.0;  // trials measure steps, not accuracy
  auto outcome = runPairs(p, policy, o.out, hooks);
  if (!outcome.ok()) return outcome.error();
  if (outcome->cancelled) return makeError(Errc::Cancelled, "the throughput trials were stopped");
  if (outcome->variants.empty()) return makeError(Errc::Internal, "the throughput trials ran no pair");
  const VariantRuns& v = outcome->variants.front();
  if (outcome->failed)
    return makeError(Errc::Internal, "a throughput trial failed: " + (v.failures.empty() ? std::string("see ") + o.out.string()
                                                                                          : v.failures.front()));
  const stats::SpeedupEstimate e = o.evaluation ? evaluationSpeed(v, policy.sequential().at(v.countedPairs()))
                                                 : estimatePairs(v, std::nullopt, policy.sequential()).throughput;
  records::SpeedRecord s;
  s.kind = o.evaluation ? "evaluation trials" : "trials";
  s.changed = compare::describeDiff(compare::configDiff(proto::configToJson(o.baseline), proto::configToJson(o.variant)));
  s.steps_per_trial = o.steps;
  s.rounds = v.countedPairs();
  s.baseline_rates = ratesOf(v.references, v);
  s.variant_rates = ratesOf(v.variants, v);
  s.estimate = e;
  s.contended = v.countedPairs() == 0;
  s.pairs_run = int(v.pairs.size());
  s.settled = v.settled;
  if (const int aside = v.countedPairs() - v.usablePairs(); aside > 0) s.set_aside = aside;
  s.variant_startup_s = perCounted(v.variants, v, [](const compare::RunMetrics& m) { return m.time_to_first_step_s; });
  if (o.evaluation) {
    s.evaluations_per_trial = kEvalTrialEvaluations;
    s.baseline_eval_s = evalSecondsOf(v.references, v);
    s.variant_eval_s = evalSecondsOf(v.variants, v);
  }
  return s;
}

}  // namespace wb::experiment::detail
