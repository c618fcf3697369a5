#include "wb/advice/advisor.h"

#include <algorithm>
#include <cmath>

#include "wb/common/choices.h"
#include "wb/common/config.h"
#include "wb/common/config_schema.h"
#include "wb/common/speedups.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/compare/mfu.h"

namespace wb::advice {
using nlohmann::json;
using compare::Contention;
using compare::RunMetrics;
using compare::configDiff;
using compare::fmtGflops;
using compare::runLrScaling;
using compare::speedupOf;
using records::RunRecord;
using records::StepTimes;

namespace {

// A config field by its label (the option schema's), its key where it has none.
std::string fieldLabel(const std::string& path) {
  const FieldSpec* spec = findFieldSpec(path);
  return spec && spec->label && *spec->label ? spec->label : path;
}


// Thresholds. Shares are of the mean step time after warm-up (ms.data+h2d+fwd+bwd+opt+comm).
constexpr double kDataBoundShare = 0.30;   // a third of each step idle on the loader: workers pay
constexpr double kH2dShare = 0.15;         // copies this visible on CUDA: pinned + non_blocking pay
constexpr double kCommShare = 0.30;        // communication this large eats most of a 2nd device
constexpr double kComputeShare = 0.70;     // fwd+bwd dominate: precision is the lever left
constexpr double kLateSkipFraction = 0.20; // fp16 skips after the first 20 % of steps are not warm-up
constexpr double kAccDropPp = 1.0;         // accuracy lost beyond 1 pp is a cost worth naming
constexpr double kShardingMinSaving = 0.05;// < 5 % memory saved: sharding does nothing useful here
constexpr double kEvalShare = 0.10;        // evaluation ≥ 10 % of the wall time is worth speeding up
constexpr double kScalingPoor = 0.5;       // < 50 % scaling efficiency across devices
// % of the measured peak (the fastest kernel at the run's precision): below kOverheadPct while the loader is not the bottleneck, the step
// is spent in per-operation overhead (dispatch, small kernels, memory traffic), not arithmetic
// (lenet at batch 64 on a CPU: ~1-3 %); from kNearPeakPct arithmetic itself is the limit.
constexpr double kOverheadPct = 10.0;
constexpr double kNearPeakPct = 50.0;

std::string lowerFirst(std::string s) {
  if (!s.empty()) s[0] = char(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

std::string pct(double fraction) { return std::to_string(static_cast<long>(std::lround(fraction * 100.0))) + " %"; }

// The run's config value at path, or the config's own default (wb::Config) where the run's
// config.json lacks it or holds another type: the advisor has no defaults of its own.
template <class Is>
const json& configValue(const RunRecord& r, const char* path, Is is) {
  static const RunRecord defaults = [] {
    RunRecord d;
    const Config config;
    d.config = proto::configToJson(config);
    return d;
  }();
  const json& j = r.configAt(path);
  return (j.*is)() ? j : defaults.configAt(path);
}
int intAt(const RunRecord& r, const char* path) {
  const json& j = configValue(r, path, &json::is_number);
  return j.is_number() ? j.get<int>() : 0;
}
std::string strAt(const RunRecord& r, const char* path) {
  const json& j = configValue(r, path, &json::is_string);
  return j.is_string() ? j.get<std::string>() : std::string();
}
bool boolAt(const RunRecord& r, const char* path) {
  const json& j = configValue(r, path, &json::is_boolean);
  return j.is_boolean() && j.get<bool>();
}

std::string fmtScale(double s) {
  if (s >= 1 && std::fabs(s - std::round(s)) < 1e-9) return std::to_string(static_cast<long long>(std::llround(s)));
  return fmtFixed(s, 3);
}

using Out = std::vector<Advice>;

// Whether a start event's speedups.<key>.requested asks for the speedup (true, workers > 0,
// devices > 1, a precision or sharding other than the default).
void statusVerdicts(const RunRecord& run, Out& out) {
  if (run.status == "failed" || run.status == "diverged") {
    std::string why = run.errors.empty() ? std::string("see logs/rank-N.log") : run.errors.front();
    out.push_back({"status", Severity::Warning, "The run " + run.status + ": " + why + "."});
  } else if (run.status == "cancelled") {
    out.push_back({"status", Severity::Info, "The run was cancelled: its numbers cover only the part that ran."});
  } else if (!run.finished) {
    out.push_back({"status", Severity::Info, "The run has not ended yet: numbers so far."});
  }
  if (!run.warnings.empty())
    out.push_back({"warnings", Severity::Warning,
                   std::to_string(run.warnings.size()) + " warning(s) during the run, first: " + run.warnings.front()});
  for (const auto& [name, s] : run.start.speedups)
    if (s.requested && !s.active)
      out.push_back({"inactive-" + name, Severity::Warning,
                     name + " was requested but is not active: " + (s.note.empty() ? "no reason given" : s.note)});
}

// What to do about a data-bound run with `workers` loader workers, by what the stored probe (or,
// without one, the rule of thumb) recommends.
std::string dataBoundFix(int workers, const WorkersAdvice& a) {
  const std::string rec = std::to_string(a.workers) + (a.workers == 1 ? " worker" : " workers");
  if (a.measured && a.data_not_bottleneck)
    return "yet " + a.source() + " found the data path is not the bottleneck for this experiment on this machine (it "
           "recommends " + rec + "): the wait comes from something the probe did not see, such as other load or colder "
           "storage; probe again under this run's conditions (`workbench-cli probe workers`)";
  const std::string cheaper = ": make decoding cheaper (smaller images, lighter augmentation) or the storage faster";
  if (a.measured)
    return workers < a.workers ? "raise loader workers from " + std::to_string(workers) + " to " + std::to_string(a.workers) +
                                     " (" + a.source() + " measured " + rec + " as the best count for this experiment on this machine)"
                               : "the loader already has " + std::to_string(workers) + " workers, and " + a.source() +
                                     " found no gain beyond " + rec + cheaper;
  return workers < a.workers ? "raise loader workers from " + std::to_string(workers) + " to " + std::to_string(a.workers) +
                                   " (" + a.source() + ", not measured: `workbench-cli probe workers` measures the best "
                                   "count for this experiment on this machine)"
                             : "the loader already has " + std::to_string(workers) + " workers" + cheaper +
                                   " (`workbench-cli probe workers` measures whether more would help)";
}

void stepSplitVerdicts(const RunRecord& run, const RunMetrics& m, const WorkersAdvice& advice, Out& out) {
  if (!m.step_ms || m.step_ms->total() <= 0) return;
  const StepTimes& s = *m.step_ms;
  const double total = s.total();
  const int workers = intAt(run, "speedups.workers");
  const int devices = intAt(run, "speedups.devices");
  const double data = s.data / total;
  if (data >= kDataBoundShare)
    out.push_back({"data-bound", Severity::Tip, "Data-bound: " + pct(data) + " of each step waits for data — " +
                                                    dataBoundFix(workers, advice) + "."});
  if (run.onCuda() && s.h2d / total >= kH2dShare && !boolAt(run, "speedups.pin_memory"))
    out.push_back({"h2d", Severity::Tip, "Host-to-device copies take " + pct(s.h2d / total) +
                                            " of each step — turn on pin memory so they overlap compute."});
  if (devices > 1 && s.comm / total >= kCommShare)
    out.push_back({"comm-bound", Severity::Tip, "Communication takes " + pct(s.comm / total) + " of each step on " +
                                                   std::to_string(devices) +
                                                   " devices — a larger batch per rank or fewer devices would waste less."});
  // Compute-bound matters only while precision is still a lever (fp32), and not when the step
  // is overhead-bound (rooflineVerdicts says so instead: precision does not cut overhead), nor
  // when fresh batches make the step much slower than a batch already in memory (the data path
  // is the lever then, whatever share forward + backward take of the split: rooflineVerdicts).
  const double compute = (s.fwd + s.bwd) / total;
  const auto pctOfPeak = m.flops ? m.flops->pctOfPeak() : std::nullopt;
  const bool overheadBound = pctOfPeak && *pctOfPeak < kOverheadPct;
  const auto dataPath = m.flops ? m.flops->dataPathShare() : std::nullopt;
  const bool dataPathHeavy = dataPath && *dataPath >= kDataBoundShare;
  if (compute >= kComputeShare && !overheadBound && !dataPathHeavy && strAt(run, "speedups.precision") == choice::kFp32) {
    const std::string tip = run.onCuda() ? " — mixed precision (16-mixed or bf16-mixed) is the lever left."
                                         : " — bf16-mixed is the lever left if this CPU has native bf16.";
    out.push_back({"compute-bound", Severity::Info, "Compute-bound: forward + backward take " + pct(compute) + " of each step" + tip});
  }
}

// How far from the limit: the run's achieved GFLOP/s against this machine's measured peak.
void rooflineVerdicts(const RunRecord& run, const RunMetrics& m, Out& out) {
  if (!m.flops || !(m.flops->per_step > 0)) return;
  const proto::FlopsFigures& f = *m.flops;
  const auto share = f.dataPathShare();
  // Two measures of two things, said as such: the step split times the loader's wait; the data
  // path compares the whole step with the same step on a batch already in memory.
  const double wait = m.step_ms && m.step_ms->total() > 0 ? m.step_ms->data / m.step_ms->total() : -1;
  const std::string dataPath =
      share ? " The data path costs " + pct(*share) + " of each step (the same step on a batch already in memory: " +
                  fmtFixed(*f.compute_only_step_ms, 2) + " ms against " + fmtFixed(*f.step_ms, 2) + " ms)" +
                  (wait >= 0 && *share >= kDataBoundShare && *share - wait >= 0.1
                       ? "; the loader's wait is only " + pct(wait) + " of the step split, so the rest is the fresh "
                         "batches' trip through memory (cache misses), not arithmetic."
                       : ".")
            : "";
  const auto pctOfPeak = f.pctOfPeak();
  if (!pctOfPeak) {
    out.push_back({"no-peak", Severity::Info, "Achieved " + fmtGflops(f.achieved_gflop_per_s) + " GFLOP/s; " +
                                                  f.no_peak + " to see how far from the limit that is." + dataPath});
    return;
  }
  const std::string who = strAt(run, "model.name") + " at batch " +
                          std::to_string(intAt(run, "train.batch_size")) + " reaches " +
                          fmtFixed(*pctOfPeak, *pctOfPeak < 10 ? 1 : 0) + " % of this " +
                          (run.onCuda() ? "GPU" : "CPU") + "'s " + f.peak->what.substr(0, f.peak->what.find(" measured")) +
                          " peak (" + fmtGflops(f.achieved_gflop_per_s) + " of " + fmtGflops(f.peak->gflop_per_s) +
                          " GFLOP/s)";
  // Far below the peak while the loader is not what the step waits for (the data-bound verdict
  // covers that): the arithmetic is not what takes the time.
  const double data = m.step_ms && m.step_ms->total() > 0 ? m.step_ms->data / m.step_ms->total() : 0;
  if (*pctOfPeak < kOverheadPct && data < kDataBoundShare)
    out.push_back({"overhead-bound", Severity::Tip,
                   who + ": the step is bound by per-operation overhead, not arithmetic; a larger batch "
                         "(train.batch_size) gives each operation more work for the same overhead, and mixed "
                         "precision would change little." + dataPath});
  else if (*pctOfPeak >= kNearPeakPct)
    out.push_back({"near-peak", Severity::Info,
                   who + ": arithmetic is the limit; only less of it (lower precision where it is native, a "
                         "smaller model) or more hardware makes the step faster." + dataPath});
  else
    out.push_back({"mfu", Severity::Info, who + "." + dataPath});
}

void fp16Verdicts(const RunRecord& run, const RunMetrics& m, Out& out) {
  if (strAt(run, "speedups.precision") != choice::kFp16Mixed || !m.skipped_steps) return;
  const int64_t skipped = *m.skipped_steps;
  const std::string scale = m.amp_scale ? " the scale settled at " + fmtScale(*m.amp_scale) : " the scale is unknown";
  if (skipped == 0) {
    out.push_back({"fp16-skips", Severity::Info, "fp16 skipped no steps;" + scale + "."});
    return;
  }
  // The step at which the count last grew: early growth is the scaler finding its level.
  int64_t lastGrowth = 0, prev = 0;
  for (const auto& st : run.steps)
    if (st.amp_skipped) {
      if (*st.amp_skipped > prev) lastGrowth = st.step;
      prev = *st.amp_skipped;
    }
  const double totalSteps = std::max<double>(1.0, static_cast<double>(m.steps));
  if (lastGrowth <= kLateSkipFraction * totalSteps)
    out.push_back({"fp16-skips", Severity::Info,
                   "fp16 skipped " + std::to_string(skipped) + " early steps (normal);" + scale + "."});
  else
    out.push_back({"fp16-skips", Severity::Warning,
                   "fp16 skipped " + std::to_string(skipped) + " steps, still at step " + std::to_string(lastGrowth) +
                       " of " + std::to_string(m.steps) + ": gradients keep overflowing — lower the learning rate or use bf16-mixed;" +
                       scale + "."});
}

void earlyStopVerdicts(const RunRecord& run, const RunMetrics& m, Out& out) {
  const int patience = intAt(run, "speedups.early_stopping.patience");
  const int planned = intAt(run, "train.epochs");
  if (run.early_stop) {
    const int ran = m.epochs;
    const int best = run.early_stop->best_epoch;
    std::string text = "Early stopping ended the run after epoch " + std::to_string(ran) + " of " + std::to_string(planned);
    if (best > 0) text += " (best epoch " + std::to_string(best) + ")";
    if (planned > ran && m.time_per_epoch_s)
      text += ": saved about " + fmtSeconds((planned - ran) * *m.time_per_epoch_s) + ", " +
              pct(static_cast<double>(planned - ran) / planned) + " of the planned epochs";
    out.push_back({"early-stop", Severity::Info, text + "."});
  } else if (patience > 0 && planned > 0 && planned <= patience) {
    out.push_back({"early-stop", Severity::Info, "Early stopping (patience " + std::to_string(patience) +
                                                     ") cannot trigger in " + std::to_string(planned) +
                                                     " epoch(s): train longer for it to save time."});
  } else if (patience > 0 && run.finished) {
    out.push_back({"early-stop", Severity::Info, "Early stopping (patience " + std::to_string(patience) +
                                                     ") never triggered: the model still improved every epoch."});
  }
}

// A measurement that shared its CPU says nothing about speed: say so before any speed verdict.
void contentionVerdicts(const RunMetrics& m, const RunMetrics* rm, Out& out) {
  const Contention& c = m.contention;
  if (c.contended && !c.byOthers())  // its own experiment's runs beside it: no one to ask to stop
    out.push_back({"contended", Severity::Warning,
                   "Measured beside its own experiment's runs: " + c.note +
                       ", so its times and speedups are not this machine's — run it alone to time it."});
  else if (c.contended)
    out.push_back({"contended", Severity::Warning,
                   "Measured under contention: " + c.note +
                       " during this run, so its times and speedups are not trustworthy — rerun on an idle machine."});
  if (rm && rm->contention.contended)
    out.push_back({"contended-reference", Severity::Warning,
                   "The reference was measured under contention (" + rm->contention.note +
                       "): the speed comparison with it is not trustworthy — rerun the reference on an idle machine."});
  if (c.asked_cores && c.cores > 0 && *c.asked_cores > c.cores + 0.5)
    out.push_back({"oversubscribed", Severity::Tip,
                   "The ranks asked for " + fmtFixed(*c.asked_cores, 0) + " threads on " + std::to_string(c.cores) +
                       " cores: they compete with each other — fewer threads per rank or fewer devices would waste less."});
}

// Whether the run asks for `s`: its field differs from the baseline's (wb::Config's value where the
// run's config lacks it).
bool asks(const RunRecord& r, const Speedup& s) {
  Config off;
  s.off(off);
  const json& j = r.configAt(s.config_path);
  const json given = j.is_null() ? proto::valueAt(proto::configToJson(Config{}), s.config_path) : j;
  return given != proto::valueAt(proto::configToJson(off), s.config_path);
}

// A speedup that changes only the evaluation (Timing::Evaluation): its measured effect on the
// evaluation against a reference that differs in it, else a tip where evaluation is a large share.
void evalVerdict(const Speedup& s, const RunRecord& run, const RunMetrics& m, const RunRecord* ref, const RunMetrics* rm, Out& out) {
  std::string id = s.key;
  std::replace(id.begin(), id.end(), '_', '-');
  const bool asked = asks(run, s);
  const bool timed = ref && rm && !m.contention.contended && !rm->contention.contended;
  if (timed && m.eval_ms && rm->eval_ms && asks(*ref, s) != asked) {
    const double saved = 1.0 - *m.eval_ms / *rm->eval_ms;
    std::string text = (asked ? std::string(s.label) : "Evaluation without " + lowerFirst(s.label)) + " took " +
                       fmtFixed(*m.eval_ms, 0) + " ms per evaluation vs " + fmtFixed(*rm->eval_ms, 0) + " ms (" +
                       (saved >= 0 ? pct(saved) + " less" : pct(-saved) + " more") + ").";
    out.push_back({id, Severity::Info, text});
    return;
  }
  if (!asked && m.eval_s && m.wall_s && *m.wall_s > 0) {
    const double share = *m.eval_s / *m.wall_s;
    Config on;
    s.on(on, Here{});
    const std::string set = std::string(s.config_path) + "=" + proto::valueAt(proto::configToJson(on), s.config_path).dump();
    if (share >= kEvalShare)
      out.push_back({id, Severity::Tip, "Evaluation takes " + pct(share) + " of the wall time without " + lowerFirst(s.label) +
                                            " — set " + set + "."});
  }
}

void evalVerdicts(const RunRecord& run, const RunMetrics& m, const RunRecord* ref, const RunMetrics* rm, Out& out) {
  for (const Speedup& s : speedupTable())
    if (s.timing == Timing::Evaluation) evalVerdict(s, run, m, ref, rm, out);
}

// The speed effect of the one speedup that changed, only when it clears the noise.
void effectVerdict(const std::string& key, const RunMetrics& m, const RunMetrics& rm, const stats::SpeedupEstimate* given, Out& out) {
  stats::SpeedupEstimate e = given ? *given : stats::SpeedupEstimate{};
  if (!given && rm.wall_s && m.wall_s) e = stats::groupSpeedup({*rm.wall_s}, {*m.wall_s});
  if (!std::isfinite(e.point)) return;
  const std::string measured = stats::formatEstimate(e);
  if (e.verdict == stats::Verdict::Slower)
    out.push_back({"slower", Severity::Warning, "Changing " + key + " made this run " + pct(1.0 / e.point - 1.0) +
                                                    " slower than the reference (" + measured +
                                                    ", beyond this machine's noise) — leave it off on this machine."});
  else if (e.verdict == stats::Verdict::Faster)
    out.push_back({"faster", Severity::Info, "Changing " + key + " made this run " + fmtSpeedup(e.point) +
                                                 " faster than the reference (" + measured + ", beyond this machine's noise)."});
  else
    out.push_back({"within-noise", Severity::Info,
                   "Changing " + key + ": " + measured + " — within this machine's run-to-run noise, so no speed "
                       "effect is shown; repeat both configurations (pairs, A B A B) to tell."});
}

void referenceVerdicts(const RunRecord& run, const RunMetrics& m, const RunRecord& ref, const RunMetrics& rm,
                       const stats::SpeedupEstimate* effect, Out& out) {
  // Speed verdicts on a contended measurement would be verdicts on the other load.
  const bool speedTrusted = !m.contention.contended && !rm.contention.contended;
  std::vector<std::string> speedupKeys;
  for (const auto& c : configDiff(ref.config, run.config))
    if (c.path.rfind("speedups.", 0) == 0) speedupKeys.push_back(c.path.substr(9));
  // A lever that only ends the run elsewhere (early stopping) and never fired cannot have changed
  // the speed: any difference is noise.
  const Speedup* only = speedupKeys.size() == 1 ? speedupOfField("speedups." + speedupKeys.front()) : nullptr;
  const bool inertEarlyStop = only && only->math.check == MathCheck::Stopping && !run.early_stop;
  if (speedTrusted && speedupKeys.size() == 1 && !inertEarlyStop)
    effectVerdict(lowerFirst(fieldLabel("speedups." + speedupKeys.front())), m, rm, effect, out);
  if (m.best_val_acc && rm.best_val_acc) {
    const double drop = (*rm.best_val_acc - *m.best_val_acc) * 100.0;
    // More ranks multiply the global batch: the same epochs are fewer optimiser steps.
    const int batch = intAt(run, "train.batch_size") * intAt(run, "speedups.devices");
    const int refBatch = intAt(ref, "train.batch_size") * intAt(ref, "speedups.devices");
    std::string why = ": this speedup costs accuracy.";
    if (batch > refBatch && refBatch > 0) {
      const double ratio = static_cast<double>(batch) / refBatch;
      const std::string factor = fmtFixed(ratio, batch % refBatch ? 1 : 0);
      // The lr each trained at (optim.lr × its optim.lr_scaling factor), by the trainer's rule.
      const double lr = runLrScaling(run).effective_lr, refLr = runLrScaling(ref).effective_lr;
      const bool lrScaled = refLr > 0 && lr / refLr >= ratio * 0.99;
      // More devices with the same per-rank batch: the setting that scales the lr for them.
      const bool byDevices = intAt(run, "train.batch_size") == intAt(ref, "train.batch_size");
      const std::string fix =
          byDevices ? "set optim.lr_scaling=linear (optim.lr × " + factor + " after a short warm-up; the ladder: "
                      "--lr-scaling linear) or train more epochs."
                    : "scale optim.lr by " + factor + " (linear scaling rule) or train more epochs.";
      why = ": the global batch is " + factor + "× the reference's (" + std::to_string(batch) + " vs " +
            std::to_string(refBatch) + "), so the same epochs are " + factor + "× fewer optimiser steps — " +
            (lrScaled ? "the lr is already scaled by " + factor + ", so train more epochs (or lengthen optim.lr_scaling_warmup)."
                      : fix);
    }
    if (drop > kAccDropPp)
      out.push_back({"accuracy", Severity::Warning, "Best val acc is " + fmtFixed(drop, 2) + " pp below the reference" + why});
  }
  const int devices = intAt(run, "speedups.devices"), refDevices = intAt(ref, "speedups.devices");
  // Scaling efficiency means something only when the device count is all that changed.
  const bool onlyDevices = speedupKeys.size() == 1 && speedupKeys.front() == "devices";
  const auto& sps = m.train_samples_per_s;
  const auto& refSps = rm.train_samples_per_s;
  if (speedTrusted && onlyDevices && devices > refDevices && sps && refSps && *refSps > 0) {
    const double gain = *sps / *refSps;
    const double eff = gain * refDevices / devices;
    out.push_back({"scaling", eff < kScalingPoor ? Severity::Warning : Severity::Info,
                   std::to_string(devices) + (run.onCuda() ? " GPUs" : " CPU processes") + " gave " + fmtSpeedup(gain) +
                       " train samples/s over " + std::to_string(refDevices) + " (" + pct(eff) + " scaling efficiency)" +
                       (eff < kScalingPoor ? ": the ranks share cores or wait on communication." : ".")});
  }
  const std::string sharding = strAt(run, "speedups.sharding");
  if (sharding != "off" && strAt(ref, "speedups.sharding") == "off" && m.peak_mem_bytes && rm.peak_mem_bytes &&
      *rm.peak_mem_bytes > 0) {
    const double saving = 1.0 - *m.peak_mem_bytes / *rm.peak_mem_bytes;
    double cost = 0;
    if (m.step_ms && rm.step_ms && rm.step_ms->total() > 0) cost = m.step_ms->total() / rm.step_ms->total() - 1.0;
    else if (auto sp = speedupOf(rm.time_per_epoch_s, m.time_per_epoch_s)) cost = 1.0 / *sp - 1.0;
    const std::string costText = !speedTrusted ? std::string("a step-time cost not measurable under contention")
                                 : cost >= 0   ? pct(cost) + " step-time cost"
                                               : pct(-cost) + " step-time gain";
    if (saving >= kShardingMinSaving)
      out.push_back({"sharding", Severity::Info, "Sharding (" + sharding + ") saved " + pct(saving) + " peak " + m.peak_mem_kind +
                                                     " memory at " + costText + ": worth it only if memory is the limit."});
    else
      out.push_back({"sharding", Severity::Tip, "Sharding (" + sharding + ") saved " + pct(std::max(0.0, saving)) +
                                                    " memory (" + costText + "): the optimiser state is too small here to pay — leave it off."});
  }
}

}  // namespace

const char* severityName(Severity s) {
  switch (s) {
    case Severity::Info: return "info";
    case Severity::Tip: return "tip";
    case Severity::Warning: return "warning";
  }
  return "info";
}

std::vector<Advice> advise(const RunRecord& run, const RunMetrics& m, const RunRecord* reference,
                           const RunMetrics* reference_m, const WorkersAdvice* workers, const stats::SpeedupEstimate* effect) {
  Out out;
  statusVerdicts(run, out);
  contentionVerdicts(m, reference ? reference_m : nullptr, out);
  stepSplitVerdicts(run, m, workers ? *workers : ruleOfThumbFor(run), out);
  rooflineVerdicts(run, m, out);
  fp16Verdicts(run, m, out);
  earlyStopVerdicts(run, m, out);
  evalVerdicts(run, m, reference, reference_m, out);
  if (reference && reference_m) referenceVerdicts(run, m, *reference, *reference_m, effect, out);
  return out;
}

}  // namespace wb::advice
