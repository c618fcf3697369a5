// `try` by parts: the math check, the throughput, the reference runs and the variant's runs to the
// target, composed into the time to target (wb/experiment/composed_try.h; the parts: composed_inputs.h).
#include "wb/experiment/composed_try.h"

#include "composed_inputs.h"

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
namespace wb::experiment {
namespace fs = std::filesystem;
using nlohmann::json;
using namespace detail;

bool referenceRunsExpected(const TryOptions& o) {
  const Changes c = changesOf(o);
  if (c.has(Part::Replay) || c.has(Part::MathOnly) || !c.unknown.empty()) return true;
  for (const auto& [part, paths] : c.parts)
    for (const auto& path : paths) {
      const Speedup* s = speedupOfField(path);
      if (!s || s->math.math != Math::Keeps) return true;
    }
  return false;
}

bool samplesNeverFewer(const TryOptions& o) {
  static const std::set<std::string> kBatchFields{"speedups.devices",  "train.batch_size",  "speedups.grad_accumulation",
                                                  "optim.lr",          "optim.lr_scaling",  "optim.lr_base_batch",
                                                  "optim.lr_scaling_warmup"};
  const Changes c = changesOf(o);
  if (!c.unknown.empty()) return false;
  for (const auto& [part, paths] : c.parts)
    for (const auto& path : paths)
      if (!kBatchFields.count(path)) return false;
  const double grow = double(samplesPerStep(o.variant)) / double(samplesPerStep(o.baseline));
  const auto lrOf = [](const Config& k) { return lrScaling(k.optim, k.speedups.devices, 0, k.train.batch_size).effective_lr; };
  return grow > 1 && lrOf(o.baseline) > 0 && lrOf(o.variant) <= lrOf(o.baseline) * grow * (1 + 1e-9);
}

std::string composedUnavailable(const TryOptions& o) {
  if (o.user_command.set()) return "the runs are your own command (--command): only whole runs measure it";
  if (o.variant_command) return "the variant is another command (--variant-command): only whole runs measure it";
  const Changes c = changesOf(o);
  if (!c.unknown.empty())
    return c.unknown.front() + " is not measured by parts: only a change of the steps, of the evaluation or of early "
                               "stopping is (precision, workers, pin memory, devices, sharding, the batch, the levers "
                               "past the recipe, the optimiser's numbers, inference-mode eval, the evaluation "
                               "batch, early stopping)";
  if (c.has(Part::Replay) && c.parts.size() > 1)
    return "early stopping is replayed on the reference runs' evaluations, which another change would move: try it on its own";
  if (c.has(Part::Replay) && o.baseline.speedups.early_stopping.patience > 0)
    return "the baseline stops early itself, so its reference runs end where it stops: another early stopping cannot be "
           "replayed on them";
  return "";
}

namespace {

// The reference runs this try uses: run (to `composed.reference_runs`) when the math changes;
// when it keeps the math, only those the experiment already has (none: training time only).
Result<std::optional<ReferenceRuns>> referencesFor(const TryOptions& o, const ComposedOptions& c, const Inputs& in,
                                                   const Hooks& h) {
  ReferenceOptions r;
  r.baseline = o.baseline;
  r.dataset_id = in.math.dataset_id;
  r.train_samples = in.train_samples;
  r.store = c.references;
  r.runs = c.reference_runs;
  r.parallel = c.parallel > 0 ? c.parallel : referenceParallel(o.baseline, in.math.device == "cpu", c.reference_runs);
  r.cli_path = h.cli_path;
  r.stop = h.stop;
  r.log = h.log;
  r.on_progress = [&h](int done, int total) { detail::phase(h, kReferencePhase, done, total); };
  std::error_code ec;
  const bool stored = fs::exists(r.store / referenceKey(o.baseline, r.dataset_id) / proto::kReferenceFile, ec);
  const bool needed = !in.keeps || in.changes.has(Part::Replay);
  if (c.reference_runs <= 0 || (!needed && !stored)) return std::optional<ReferenceRuns>();
  auto refs = ensureReferenceRuns(r);
  if (!refs.ok()) return refs.error();
  return std::optional<ReferenceRuns>(std::move(*refs));
}

// The target: the user's, else the reference runs' fair target (their lowest best less its spread):
// the one rule of both methods (tryTarget).
TryTarget targetOf(const TryOptions& o, const std::optional<ReferenceRuns>& refs) {
  return tryTarget(o.policy.target_acc, refs ? refs->runs : std::vector<records::RunRecord>{}, nullptr);
}

Result<Inputs> measureAll(const TryOptions& o, const ComposedOptions& c, const Hooks& h) {
  Inputs in;
  in.rule.min_effect = o.policy.min_effect;
  in.changes = changesOf(o);
  auto speed = detail::measureSpeed(o, c.futility, h);
  if (!speed.ok()) return speed.error();
  in.math = std::move(*speed->math);
  in.segments = std::move(speed->throughput);
  in.evaluation = std::move(speed->evaluation);
  in.keeps = in.math.keeps_math;
  in.train_samples = in.math.train_samples;
  auto refs = referencesFor(o, c, in, h);
  if (!refs.ok()) return refs.error();
  in.refs = std::move(*refs);
  if (in.refs) in.baseline = baselineTiming(in.refs->runs, h);
  if (!in.keeps && !in.refs)
    return makeError(Errc::InvalidConfig, "the variant changes the training's math (" + in.math.verdict +
                                              ") and --reference-runs is 0: its samples to target need runs; give --reference-runs 5");
  if (in.changes.has(Part::Replay) && !in.refs)
    return makeError(Errc::InvalidConfig, "early stopping is replayed on the experiment's reference runs and --reference-runs is 0: "
                                          "give --reference-runs 5");
  in.target_rule = targetOf(o, in.refs);
  in.target = in.target_rule.acc();
  if (auto st = measureSamples(o, c, in, h); !st.ok()) return st.error();
  return in;
}

// What a try cut short keeps for the same command to reuse, in words: its parts' results in its

}  // namespace

Result<TryResult> runComposedTry(const TryOptions& o, const ComposedOptions& c, const Hooks& hooks) {
  if (auto st = keepUnreadableResult(o.out / proto::kTryFile, hooks); !st.ok()) return st.error();
  if (auto st = keepTryInputs(o); !st.ok()) return st.error();
  if (auto st = detail::writeConfigs(o); !st.ok()) return st.error();
  Hooks h = hooks;  // the reference runs finished so far: what a cut try keeps of them
  std::pair<int, int> references{0, 0};
  h.on_event = [&references, &hooks](const json& ev) {
    if (proto::isEvent<proto::PhaseEvent>(ev))
      if (const auto p = proto::readPhaseEvent(ev); p.phase == kReferencePhase) references = {p.done, p.total};
    hooks.emit(ev);
  };
  auto in = measureAll(o, c, h);
  if (!in.ok()) {
    // Stopped, whatever the part under way made of its cut process (a run that ended "cancelled"):
    // a cancel, never a failure.
    const bool cut = in.error().code == Errc::Cancelled || h.stopRequested();
    proto::TryRecord stopped = tryRecordOf(o, Outcome{}, cut ? proto::kStatusCancelled : proto::kStatusFailed);
    stopped.method = "composed";
    stopped.error = in.error().message;
    if (cut) stopped.kept = keptForRerun(o, references);
    stopped.answer = tryAnswer(stopped);
    (void)writeFileAtomic(o.out / proto::kTryFile, proto::tryRecordJson(stopped).dump(2) + "\n");
    if (cut && in.error().code != Errc::Cancelled) return makeError(Errc::Cancelled, in.error().message);
    return in.error();
  }
  const stats::TimeToTargetEstimate e = stats::composeTimeToTarget(partsOf(o, *in), in->rule);
  TryResult r;
  r.doc = proto::tryRecordJson(composedRecord(o, *in, e, proto::kStatusOk));
  r.estimates.to_target = e.speedup;
  r.estimates.throughput = in->segments.estimate;
  r.estimates.reached = std::isfinite(e.speedup.point);
  if (auto st = writeFileAtomic(o.out / proto::kTryFile, r.doc.dump(2) + "\n"); !st.ok()) return st.error();
  return r;
}


}  // namespace wb::experiment
