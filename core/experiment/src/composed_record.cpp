// A try by parts: its record, try.json (composed_inputs.h).
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

json dirsOf(const std::vector<records::RunRecord>& runs) {
  json dirs = json::array();
  for (const auto& r : runs) dirs.push_back(r.dir);
  return dirs;
}

// The reference runs, with their seed spread at the target and the runs a 5 % change in samples to
// target would need (80 % power, the variant as many runs): what a user needs to size the next try;
// which of them weigh the start-up, evaluation and rate, and how many another process slowed.
json referencesJson(const std::optional<ReferenceRuns>& refs, const BaselineTiming& timing, std::optional<double> target) {
  if (!refs) return json();
  const double spread = target ? stats::seedSpread(targetRuns(refs->runs, *target)) : NAN;
  const int needed = std::isfinite(spread) ? stats::runsToDetect(spread, 0.05, 0.8) : 0;
  return {{"dir", refs->dir.string()}, {"key", refs->key}, {"runs", dirsOf(refs->runs)}, {"reused", refs->reused},
          {"ran", refs->ran}, {"timed", timing.timed}, {"slowed", timing.slowed}, {"resolution", refs->resolution}, {"eval_every_steps", refs->eval_every_steps},
          {"seed_spread", std::isfinite(spread) ? json(spread) : json()}, {"runs_for_5pct", needed > 0 ? json(needed) : json()}};
}

}  // namespace

proto::TryRecord composedRecord(const TryOptions& o, const Inputs& in, const stats::TimeToTargetEstimate& e, const std::string& status) {
  proto::TryRecord r = tryRecordOf(o, Outcome{}, status);
  const json throughput = records::speedRecordJson(in.segments);
  r.method = "composed";
  r.math = records::mathCheckJson(in.math);
  r.throughput = throughput;
  r.evaluation = in.evaluation ? records::speedRecordJson(*in.evaluation) : json();
  r.early_stopping = in.replay;
  r.samples = in.keeps || !in.refs     ? json()
              : in.samples_not_run      ? json{{"not_run", "the throughput was measured under contention: no verdict to gain"}}
              : in.samples_assumed      ? json{{"assumed", "at least the baseline's (a larger global batch)"}}
                                        : stats::samplesComparisonJson(in.samples);
  r.references = referencesJson(in.refs, in.baseline, in.target);
  for (const auto& run : in.variant) r.variant_runs.push_back(run.dir);
  r.variant_looks = in.looks;
  r.composed = stats::timeToTargetJson(e);
  r.words = stats::timeToTargetWords(e) + detail::replayWords(in.replay) + detail::looksWords(in.looks);
  r.training_only = !in.refs.has_value();
  r.target_acc = in.target.value_or(NAN);
  if (in.target_rule.target) r.target = in.target_rule.describe(), r.target_source = in.target_rule.source;
  r.reached = std::isfinite(e.speedup.point);
  r.estimate = {{"to_target", stats::estimateJson(e.speedup)}, {"throughput", throughput["estimate"]}};
  r.estimate["to_target"]["text"] = stats::formatEstimate(e.speedup);  // a bound reads "at most …", not "1 run each"
  if (throughputContended(in)) {  // no verdict from a contended host
    r.estimate["to_target"]["verdict"] = "contended";
    r.estimate["to_target"]["text"] = "contended: no verdict";
    r.words = "no verdict (another process used the CPU while the throughput was measured): " + r.words;
  }
  r.medians["time_to_target_s"] = {e.baseline_s, e.variant_s};
  r.medians["train_samples_per_s"] = {median(in.segments.baseline_rates), median(in.segments.variant_rates)};
  if (in.evaluation)
    r.medians["eval_s"] = {median(in.evaluation->baseline_eval_s.value_or(std::vector<double>{})),
                           median(in.evaluation->variant_eval_s.value_or(std::vector<double>{}))};
  r.answer = tryAnswer(r);
  return r;
}

// What a try cut short keeps for the same command to reuse, in words: its parts' results in its
// folder, its variant runs that finished, the experiment's reference runs that finished.
std::vector<std::string> keptForRerun(const TryOptions& o, std::pair<int, int> references) {
  std::vector<std::string> kept;
  const auto has = [&](const char* file) { return records::readStored(o.out / file).read(); };
  if (has("math.json")) kept.push_back("the math check");
  if (has("segments.json") || has("trials.json")) kept.push_back("the training throughput");
  if (has("evaluation-segments.json") || has("evaluation-trials.json")) kept.push_back("the evaluation time");
  if (references.first > 0)
    kept.push_back(std::to_string(references.first) + " of " + std::to_string(references.second) + " reference runs");
  int variants = 0;
  for (int i = 0; variantSlot(o, i).kept; ++i) ++variants;
  if (variants > 0) kept.push_back(std::to_string(variants) + " of the variant's runs to the target");
  return kept;
}


}  // namespace wb::experiment::detail
