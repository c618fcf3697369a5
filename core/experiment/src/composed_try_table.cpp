// The table of a try by parts (composed_try.h): the composed time to target and its parts.
#include <cmath>

#include "wb/experiment/composed_try.h"
#include "wb/proto/run_status.h"
#include "wb/proto/run_summary.h"
#include "wb/advice/busy_machine.h"
#include "wb/stats/convergence.h"
#include "wb/stats/estimate_json.h"
#include "wb/render/table.h"
#include "wb/stats/time_to_target_json.h"

using nlohmann::json;

namespace wb::experiment {
namespace {

render::Cell numCell(const json& v, std::string (*fmt)(double)) {
  return v.is_number() ? render::Cell::num(fmt(v.get<double>()), v.get<double>()) : render::Cell::str("–");
}

render::Cell estimateCellOf(const json& est) {
  const stats::SpeedupEstimate e = stats::estimateFromJson(est);
  if (!std::isfinite(e.point)) return render::Cell::str("–");
  return render::Cell::num(stats::formatEstimate(e), e.point);
}

std::string fmtSamples(double v) { return wb::fmtFixed(v, 0); }

std::vector<render::Cell> samplesRow(const json& doc) {
  const json samples = doc.value("samples", json());
  if (!samples.is_object())
    return {render::Cell::str("Samples to target"), render::Cell::str("–"), render::Cell::str("–"),
            render::Cell::str(doc.value("training_only", false) ? "same (keeps the math)" : "same (keeps the math, checked)")};
  if (samples.contains("assumed"))
    return {render::Cell::str("Samples to target"), render::Cell::str("–"), render::Cell::str("–"),
            render::Cell::str("not run: " + samples.value("assumed", std::string()))};
  const stats::SamplesComparison c = stats::samplesComparisonFromJson(samples);
  return {render::Cell::str("Samples to target"), render::Cell::num(fmtSamples(c.reference.samples.value), c.reference.samples.value),
          render::Cell::num(fmtSamples(c.variant.samples.value), c.variant.samples.value),
          render::Cell::str(stats::formatSamples(c))};
}

std::string throughputLabel(const json& doc) {
  const std::string kind = doc.value("throughput", json::object()).value("kind", std::string());
  return kind == "trials"      ? "Train samples/s (short trials)"
         : kind == "unchanged" ? "Train samples/s (steps untouched)"
                               : "Train samples/s (segments)";
}

// What kept the throughput from a verdict (the segments' or trials' other load and who took it),
// and what to do about it.
std::string contendedThroughputNote(const json& throughput) {
  advice::BusyMachine busy;
  busy.runs = 1;
  busy.most_other_cores = throughput.value("other_cores", 0.0);
  busy.busiest_others = proto::readProcessLoads(throughput.value("busiest_others", json()));
  return "The throughput was measured while " + advice::busyMachineLoad(busy) + ": no verdict is taken from it. " +
         advice::busyMachineRemedy(busy);
}

// Which reference runs weighed the baseline's start-up, evaluation time and rate (quietRuns), and
// when every one ran beside another process, what that does to the answer and what to do.
std::string referencesTimingNote(const json& refs) {
  const size_t runs = refs.value("runs", json::array()).size(), timed = refs.value("timed", runs);
  if (runs > 0 && refs.value("slowed", size_t{0}) == runs)
    return " Every one ran beside another process (side by side, or on a busy machine): the baseline's start-up, evaluation "
           "time and rate are overstated, which favours the variant; make them again one at a time on a quiet machine "
           "(--parallel-runs 1, a new --references folder).";
  if (timed < runs)
    return " The baseline's start-up, evaluation time and rate: from the " + std::to_string(timed) + " of them no other process slowed.";
  return "";
}

std::string referencesNote(const json& refs, bool evaluation) {
  if (!refs.is_object())
    return evaluation ? "No reference runs of this experiment yet: the time is the training steps' and the evaluations' over "
                        "the configured length (start-up not counted), each at the rate measured for it."
                      : "No reference runs of this experiment yet: the time is the training steps' over the configured "
                        "length (start-up and evaluation not counted), so the speedup is the throughput's.";
  std::string spread;
  if (const json s = refs.value("seed_spread", json()); s.is_number())
    spread = "; their seeds scatter samples to target by " + wb::fmtFixed(s.get<double>() * 100, 1) + " % (sd of ln)" +
             (refs.value("runs_for_5pct", json()).is_number()
                  ? ", so a 5 % change needs " + std::to_string(refs["runs_for_5pct"].get<int>()) + " runs an arm to be found 80 % of the time"
                  : std::string());
  return "Reference runs: " + std::to_string(refs.value("runs", json::array()).size()) + " of the baseline (" +
         std::to_string(refs.value("reused", 0)) + " reused, " + std::to_string(refs.value("ran", 0)) + " run now) in " +
         refs.value("dir", std::string()) + spread + "." + referencesTimingNote(refs);
}

}  // namespace

render::Table composedTryTable(const json& doc) {
  render::Table t;
  const json target = doc.value("target_acc", json());
  const std::string targetText = target.is_number() ? wb::fmtAccuracy(target.get<double>()) : std::string("the target");
  t.title = "Try: " + doc.value("setting", std::string("the variant")) + " against the baseline, by parts";
  t.columns = {{"measure", "Measure", ""}, {"baseline", "Baseline", ""}, {"variant", "Variant", ""}, {"speedup", "Speedup", "x"}};
  const json medians = doc.value("medians", json::object()), est = doc.value("estimate", json::object());
  const auto side = [&](const char* metric, const char* s) { return medians.value(metric, json::object()).value(s, json()); };
  t.rows.push_back({render::Cell::str("Time to " + targetText + " (composed)"),
                    numCell(side("time_to_target_s", "baseline"), wb::fmtSeconds),
                    numCell(side("time_to_target_s", "variant"), wb::fmtSeconds), estimateCellOf(est.value("to_target", json()))});
  t.rows.push_back({render::Cell::str(throughputLabel(doc)), numCell(side("train_samples_per_s", "baseline"), wb::fmtRate),
                    numCell(side("train_samples_per_s", "variant"), wb::fmtRate),
                    estimateCellOf(est.value("throughput", json()))});
  if (const json ev = doc.value("evaluation", json()); ev.is_object())
    t.rows.push_back({render::Cell::str(ev.value("kind", std::string()) == "evaluation trials" ? "One evaluation (short trials)"
                                                                                                 : "One evaluation (segments)"),
                      numCell(side("eval_s", "baseline"), wb::fmtSeconds),
                      numCell(side("eval_s", "variant"), wb::fmtSeconds), estimateCellOf(ev.value("estimate", json()))});
  t.rows.push_back(samplesRow(doc));
  t.notes.push_back(doc.value("words", std::string("–")) + ".");
  if (const json math = doc.value("math", json()); math.is_object())
    t.notes.push_back("Math: " + math.value("verdict", std::string("–")) + ".");
  if (const json seg = doc.value("throughput", json()); seg.value("contended", false))
    t.notes.push_back(contendedThroughputNote(seg));
  t.notes.push_back(referencesNote(doc.value("references", json()), doc.value("evaluation", json()).is_object()));
  if (const json es = doc.value("early_stopping", json()); es.is_object())
    t.notes.push_back("Early stopping replayed on the reference runs' evaluations (each epoch's last, as the trainer feeds the "
                      "rule): no run trained for it.");
  if (doc.value("target", json()).is_string()) t.notes.push_back("Target: " + doc["target"].get<std::string>() + ".");
  t.notes.push_back("Time to target = start-up + samples to target ÷ train samples/s + evaluations × evaluation time, "
                    "each part measured where it is precise; `--whole-runs` measures it with whole runs in pairs instead.");
  if (doc.value("status", std::string()) == proto::kStatusCancelled)
    t.notes.push_back("Cancelled: the same command on the same --out continues from what was measured.");
  return t;
}

}  // namespace wb::experiment
