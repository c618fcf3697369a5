#include "throughput_trials.h"

#include <algorithm>

#include "wb/proto/config_json.h"
#include "wb/report/compare.h"
#include "wb/report/estimate_json.h"

namespace wb::experiment::detail {
using nlohmann::json;

namespace {

// A trial: the config cut at `steps` training steps, with a small validation split (its one
// evaluation is not in the throughput) and no early stop.
Config trialConfig(Config c, int64_t steps, const std::string& who) {
  c.name += " (" + who + " trial)";
  c.train.max_steps = steps;
  c.train.epochs = std::max(c.train.epochs, 1000);
  c.train.eval_every_steps = 0;
  c.train.stop_at_accuracy = 0;
  c.data.limit_val = c.data.limit_val > 0 ? std::min<int64_t>(c.data.limit_val, 256) : 256;
  c.speedups.early_stopping.patience = 0;
  return c;
}

std::vector<double> ratesOf(const std::vector<report::RunRecord>& runs, const VariantRuns& v) {
  std::vector<double> rates;
  for (size_t i = 0; i < runs.size(); ++i)
    if (v.counted(i))
      if (auto r = report::computeMetrics(runs[i], std::nullopt).train_samples_per_s) rates.push_back(*r);
  return rates;
}

}  // namespace

Result<json> measureTrials(const TrialsOptions& o, const Hooks& hooks) {
  Plan p;
  p.steps = 2;
  p.reference = {"baseline", "the baseline", "00-baseline", 0, trialConfig(o.baseline, o.steps, "baseline")};
  p.variants.push_back({"variant", "the variant", "01-variant", 1, trialConfig(o.variant, o.steps, "variant")});
  Policy policy;
  policy.fixed_pairs = kTrialPairs;
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
  const report::SpeedupEstimate e = estimatePairs(v, std::nullopt, policy.sequential()).throughput;
  json estimate = report::estimateJson(e);
  estimate["text"] = report::formatEstimate(e);
  const bool contended = v.countedPairs() == 0;
  if (contended) estimate["verdict"] = "contended";
  return json{{"kind", "trials"},
              {"changed", report::describeDiff(report::configDiff(proto::configToJson(o.baseline), proto::configToJson(o.variant)))},
              {"steps_per_trial", o.steps},
              {"rounds", v.countedPairs()},
              {"baseline_rates", ratesOf(v.references, v)},
              {"variant_rates", ratesOf(v.variants, v)},
              {"estimate", estimate},
              {"contended", contended}};
}

}  // namespace wb::experiment::detail
