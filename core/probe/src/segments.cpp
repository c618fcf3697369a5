#include "wb/probe/segments.h"

#include "wb/common/speedups.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "bench.h"
#include "wb/common/clock.h"
#include "wb/common/processes.h"
#include "wb/data/loader_config.h"
#include "wb/proto/config_json.h"
#include "wb/proto/run_summary.h"
#include "wb/compare/compare.h"
#include "wb/stats/estimate_json.h"
#include "wb/stats/rounds_rule.h"
#include "wb/records/speed_record.h"
#include "wb/train/optim.h"
#include "wb/train/step_mode.h"
#include "wb/common/choices.h"

namespace wb::probe {
using nlohmann::json;

namespace {

// One side's settings inside the shared bench: its loader and optimiser (kept across rounds: the
// optimiser's state in the arm's own layout and kernels) and step flags.
struct Arm {
  const Config& config;
  train::StepMode mode;  // how its steps run (wb/train/step_mode.h)
  std::unique_ptr<data::Loader> loader, evalLoader;  // evalLoader: evaluation segments only
  std::unique_ptr<torch::optim::Optimizer> opt;
  int epoch = 0;
};

Result<Arm> armOf(const Bench& b, const Config& c, bool evaluation) {
  Arm a{c};
  const bool cuda = b.device.is_cuda();
  a.mode = train::stepModeOf(c, cuda);
  const data::LoaderOptions train = data::trainLoaderOptions(c, a.mode.pin, c.speedups.workers);
  a.loader = std::make_unique<data::Loader>(b.train, train);
  a.loader->startEpoch(0);
  if (evaluation) a.evalLoader = std::make_unique<data::Loader>(b.val, data::evalLoaderOptions(c, train));
  auto opt = train::makeOptimizer(c.optim, b.net->parameters(), c.speedups.fused_optimizer);
  if (!opt.ok()) return opt.error();
  a.opt = std::move(opt.value());
  return a;
}

// Switches the bench to `arm`.
void use(Bench& b, Arm& arm) {
  b.useMode(arm.mode);
  b.stepper = arm.opt.get();
  b.useCudaSwitches(arm.config.speedups.cudnn_benchmark, arm.config.speedups.tf32);
}

// Switches the bench to `arm` and takes two untimed steps of it.
void enter(Bench& b, Arm& arm) {
  use(b, arm);
  for (int i = 0; i < 2 && !b.stopped(); ++i) {
    const data::Batch batch = b.nextBatch(*arm.loader, arm.epoch);
    b.step(batch.x, batch.y);
  }
  b.sync();
}

// One segment of `arm`: two untimed steps, then `steps` timed ones; its samples/s.
double segment(Bench& b, Arm& arm, int steps) {
  enter(b, arm);
  int64_t samples = 0;
  Stopwatch clock;
  for (int i = 0; i < steps && !b.stopped(); ++i) {
    const data::Batch batch = b.nextBatch(*arm.loader, arm.epoch);
    b.step(batch.x, batch.y);
    samples += batch.x.size(0);
  }
  b.sync();
  return samples / std::max(clock.seconds(), 1e-9);
}

// `passes` evaluations of `arm` over the validation split; its samples/s.
double evaluationSegment(Bench& b, Arm& arm, int passes) {
  use(b, arm);
  int64_t samples = 0;
  Stopwatch clock;
  for (int i = 0; i < passes && !b.stopped(); ++i) samples += b.evaluate(*arm.evalLoader, arm.config.speedups.inference_eval);
  b.sync();
  return samples / std::max(clock.seconds(), 1e-9);
}

// The warm-up of `arm`: two untimed steps, then steps until `seconds` have passed (at least 3);
// its seconds per step.
double warmUp(Bench& b, Arm& arm, double seconds) {
  enter(b, arm);
  Stopwatch clock;
  int n = 0;
  while ((n < 3 || clock.seconds() < seconds) && !b.stopped()) {
    const data::Batch batch = b.nextBatch(*arm.loader, arm.epoch);
    b.step(batch.x, batch.y);
    ++n;
    if (n % 4 == 0) b.sync();
  }
  b.sync();
  return clock.seconds() / std::max(n, 1);
}

// Steps a segment takes: enough for `minSeconds` on the faster arm.
int sizedSteps(double stepA, double stepB, double minSeconds) {
  const double fastest = std::max(std::min(stepA, stepB), 1e-6);
  return int(std::clamp(std::ceil(minSeconds / fastest), 3.0, 100000.0));
}

// The estimate after the rounds so far, judged at their look (stats::judgeRounds).
void judge(SegmentsResult& r) {
  r.estimate = stats::judgeRounds(r.baseline_rates, r.variant_rates, r.looks, &r.noise);
  r.estimate.method = "interleaved segments in one process: " + r.estimate.method;
}

using Segment = std::function<double(Arm&)>;  // one timed segment of an arm: its samples/s

// Training segments: both warmed up, then `steps` a segment, given or sized.
Segment trainingSegments(Bench& b, Arm& base, Arm& variant, const SegmentsOptions& o, SegmentsResult& r) {
  b.say("warming up both (kernels chosen, loader threads started, the step time measured)…");
  const double warm = std::max(o.min_segment_s, 0.05);
  const double stepBase = warmUp(b, base, warm), stepVariant = warmUp(b, variant, warm);
  r.steps = o.steps > 0 ? o.steps : sizedSteps(stepBase, stepVariant, o.min_segment_s);
  r.sized = o.steps <= 0;
  if (r.sized)
    b.say(std::to_string(r.steps) + " steps a segment (" + wb::fmtFixed(stepBase * 1e3, 1) + " and " +
          wb::fmtFixed(stepVariant * 1e3, 1) + " ms a step: at least " + wb::fmtFixed(o.min_segment_s, 2) + " s each)");
  return [&b, &r](Arm& a) { return segment(b, a, r.steps); };
}

// Evaluation segments: the baseline's training rate from a short warm-up (to weigh the
// evaluations against the training), one untimed pass of each, then `steps` passes a segment.
Segment evaluationSegments(Bench& b, Arm& base, Arm& variant, const SegmentsOptions& o, SegmentsResult& r) {
  b.say("warming up both (a few training steps, one evaluation each)…");
  const double step = warmUp(b, base, std::max(o.min_segment_s, 0.05));
  r.train_rate = base.config.train.batch_size / std::max(step, 1e-9);
  Stopwatch clock;
  evaluationSegment(b, base, 1);
  const double passBase = clock.seconds();
  evaluationSegment(b, variant, 1);
  const double passVariant = clock.seconds() - passBase;
  r.steps = o.steps > 0 ? o.steps : int(std::clamp(std::ceil(o.min_segment_s / std::max(std::min(passBase, passVariant), 1e-6)), 1.0, 1000.0));
  r.sized = o.steps <= 0;
  r.val_samples = b.val->size();
  return [&b, &r](Arm& a) { return evaluationSegment(b, a, r.steps); };
}

// The share of the baseline's run its evaluations take: its configured evaluations at the baseline
// arm's evaluation rate so far, its training at the warm-up's rate (start-up left out: a larger
// share, so later to stop). What an evaluation lever's "cannot be faster" is judged against
// (stats::evaluationMinEffect).
double evaluationShare(const Bench& b, const Config& c, const SegmentsResult& r) {
  const double evalRate = r.baseline_rates.empty() ? 0 : stats::median(r.baseline_rates);
  if (!(evalRate > 0 && r.train_rate > 0)) return 1;
  const int64_t train = int64_t(b.train->size()), global = int64_t(std::max(1, c.train.batch_size)) * std::max(1, c.speedups.devices);
  const int64_t stepsPerEpoch = std::max<int64_t>(1, train / global);
  const double epochs = std::max(1, c.train.epochs);
  const double perEpoch = 1.0 + (c.train.eval_every_steps > 0 ? double(stepsPerEpoch / c.train.eval_every_steps) : 0.0);
  const double evalS = epochs * perEpoch * double(r.val_samples) / evalRate, trainS = epochs * double(train) / r.train_rate;
  return evalS / (evalS + trainS);
}

// Whether the rounds may stop because the variant can no longer be shown faster: for training
// segments, on their own rate; for evaluations, on what they make of the time to target.
bool cannotBeFaster(const Bench& b, const SegmentsOptions& o, SegmentsResult& r, int minRounds) {
  stats::Sequential looks = r.looks;
  const double share = o.evaluation ? evaluationShare(b, o.baseline, r) : 1.0;
  if (o.evaluation) looks.min_effect = stats::evaluationMinEffect(o.min_effect, share);
  if (!stats::roundsCannotBeFaster(r.rounds, minRounds, r.estimate, r.noise, looks, share)) return false;
  b.say(o.evaluation ? "  stopped: it can no longer make the time to target faster (evaluations are " +
                           wb::fmtFixed(100 * share, 1) + " % of a run's time)"
                     : std::string("  stopped: it can no longer be shown faster"));
  return true;
}

void rounds(Bench& b, Arm& base, Arm& variant, const SegmentsOptions& o, SegmentsResult& r) {
  const int minRounds = std::max(2, o.min_rounds), maxRounds = std::max(minRounds, o.max_rounds);
  const Segment segment = o.evaluation ? evaluationSegments(b, base, variant, o, r) : trainingSegments(b, base, variant, o, r);
  std::mt19937_64 order(std::random_device{}());  // each round's order by a coin (report/rounds_rule.h)
  for (int round = 0; r.rounds < maxRounds && round < maxRounds + stats::kSegmentMaxRounds && !b.stopped(); ++round) {
    b.say("round " + std::to_string(round + 1) + " (at most " + std::to_string(maxRounds) + " counted)…");
    const bool variantFirst = stats::variantFirst(order);
    const CpuTimes before = readCpuTimes();
    const double first = segment(variantFirst ? variant : base);
    const CpuTimes between = readCpuTimes();
    const double second = segment(variantFirst ? base : variant);
    if (b.stopped()) break;
    const CpuShare shareFirst = cpuShareBetween(before, between), shareSecond = cpuShareBetween(between, readCpuTimes());
    const double otherFirst = shareFirst.other_cores, otherSecond = shareSecond.other_cores;
    const double resolution = shareFirst.resolution_cores + shareSecond.resolution_cores;
    r.other_cores = std::max({r.other_cores, otherFirst, otherSecond});
    r.load_resolution_cores = std::max(r.load_resolution_cores, resolution);
    if (!stats::roundCounts(otherFirst, otherSecond, resolution)) {
      ++r.set_aside;
      b.say("  set aside: another process used " + wb::fmtFixed(std::max(otherFirst, otherSecond), 1) +
            " cores during one segment and not the other");
      continue;
    }
    r.baseline_rates.push_back(variantFirst ? second : first);
    r.variant_rates.push_back(variantFirst ? first : second);
    r.variant_first.push_back(variantFirst);
    r.rounds = static_cast<int>(r.baseline_rates.size());
    judge(r);
    if (stats::roundsSettled(r.rounds, minRounds, r.estimate)) break;
    if (o.only_faster && cannotBeFaster(b, o, r, minRounds)) {
      r.cannot_be_faster = true;
      break;
    }
  }
  r.contended = r.rounds < 2 && r.set_aside > 0;  // the load left no two rounds to compare
}

// A result before its rounds: what changed, where, and the looks it will be judged at.
void startResult(SegmentsResult& r, const SegmentsOptions& o, std::string changed, std::string device) {
  r.changed = std::move(changed);
  r.device = std::move(device);
  r.evaluation = o.evaluation;
  r.looks.max_pairs = std::max(std::max(2, o.min_rounds), o.max_rounds);
  r.looks.min_effect = o.min_effect;
}

}  // namespace

const std::vector<std::string>& evaluationLevers() {
  static const std::vector<std::string> levers = [] {
    std::vector<std::string> v = segmentLevers();
    for (const Speedup& s : speedupTable())
      if (s.timing == Timing::Evaluation) v.push_back(s.config_path);
    v.push_back("train.eval_batch_size");
    return v;
  }();
  return levers;
}

const std::vector<std::string>& segmentLevers() {
  static const std::vector<std::string> levers = [] {
    std::vector<std::string> v;
    for (const Speedup& s : speedupTable())
      if (s.timing == Timing::Segments) v.push_back(s.config_path);
    v.push_back("train.batch_size");
    return v;
  }();
  return levers;
}

std::string segmentLeverErrors(const Config& a, const Config& b, bool evaluation) {
  const std::vector<std::string>& allowed = evaluation ? evaluationLevers() : segmentLevers();
  std::string levers;
  for (const auto& path : allowed) levers += (levers.empty() ? "" : ", ") + path;
  std::string out;
  for (const auto& change : compare::configDiff(proto::configToJson(a), proto::configToJson(b))) {
    if (change.path == "name" || change.path == "seed") continue;
    if (std::find(allowed.begin(), allowed.end(), change.path) != allowed.end()) continue;
    const bool timedByEvaluations = std::find(evaluationLevers().begin(), evaluationLevers().end(), change.path) != evaluationLevers().end();
    out += (out.empty() ? "" : "\n") + change.path + " differs (" + change.before + " vs " + change.after + "): " +
           (timedByEvaluations ? "it changes the evaluation: time evaluations with --evaluation"
                               : "only " + levers + " change within one process; use `workbench-cli try` for it");
  }
  return out;
}

namespace {

// The math check asked for with the segments (SegmentsOptions::math_checked): whether the change
// keeps the math (then the rounds may stop once it cannot be shown faster; else they take all their
// rounds: stats::leastRounds).
Result<bool> checkMathFirst(const SegmentsOptions& o) {
  MathCheckOptions m;
  m.baseline = o.baseline;
  m.variant = o.variant;
  m.stop = o.stop;
  if (o.progress) m.progress = [&o](const std::string& line) { o.progress("the math check: " + line); };
  auto checked = checkMath(m);
  if (!checked.ok()) return checked.error();
  if (auto st = o.math_checked(*checked); !st.ok()) return st.error();
  return checked->keeps_math;
}

// The evaluations after the training rounds, on the same bench and arms: their fewest rounds.
std::shared_ptr<const SegmentsResult> evaluationAfter(Bench& b, Arm& base, Arm& variant, const SegmentsOptions& o,
                                                      const SegmentsResult& training) {
  SegmentsOptions e = o;
  e.evaluation = true;
  e.only_faster = false;
  e.steps = 0;
  e.min_rounds = e.max_rounds = std::max(2, o.min_rounds);
  auto r = std::make_shared<SegmentsResult>();
  startResult(*r, e, training.changed, training.device);
  b.say("the evaluations too (the change acts there as well)…");
  Stopwatch clock;
  rounds(b, base, variant, e, *r);
  r->total_s = clock.seconds();
  return r;
}

}  // namespace

Result<SegmentsResult> probeSegments(const SegmentsOptions& options) {
  if (options.evaluation && options.evaluation_after)
    return makeError(Errc::InvalidConfig, "evaluation segments cannot time the evaluations again after them");
  if (const std::string bad = segmentLeverErrors(options.baseline, options.variant, options.evaluation); !bad.empty())
    return makeError(Errc::InvalidConfig, bad);
  SegmentsOptions o = options;
  if (options.math_checked) {
    auto keeps = checkMathFirst(options);
    if (!keeps.ok()) return keeps.error();
    o.only_faster = o.only_faster && *keeps;
    if (!o.evaluation) o.min_rounds = stats::leastRounds(*keeps, o.min_rounds, o.max_rounds);
  }
  Stopwatch total;
  Bench b{o.baseline, o.stop, o.progress};
  if (auto st = b.open(o.variant.speedups.precision == choice::kFp16Mixed); !st.ok()) return st.error();
  if (b.train->size() < o.variant.train.batch_size)
    return makeError(Errc::Data, "data: the training split has " + std::to_string(b.train->size()) +
                                     " samples, fewer than one batch of the variant's train.batch_size");
  SegmentsResult r;
  startResult(r, o, compare::describeDiff(compare::configDiff(proto::configToJson(o.baseline), proto::configToJson(o.variant))),
              b.device.str());
  const std::vector<ProcessStat> processesBefore = allProcesses();
  try {
    const bool evaluates = o.evaluation || o.evaluation_after;
    auto base = armOf(b, o.baseline, evaluates), variant = armOf(b, o.variant, evaluates);
    if (!base.ok()) return base.error();
    if (!variant.ok()) return variant.error();
    rounds(b, *base, *variant, o, r);
    if (o.evaluation_after && !b.stopped()) r.evaluation_after = evaluationAfter(b, *base, *variant, options, r);
  } catch (const data::DataError& e) {
    return makeError(Errc::Data, e.what());
  }
  if (b.stopped()) return makeError(Errc::Cancelled, "segments cancelled after " + std::to_string(r.rounds) + " round(s)");
  r.total_s = total.seconds();
  if (r.set_aside > 0) r.busiest_others = busiestOthers(processesBefore, allProcesses(), r.total_s, {});
  return r;
}

json segmentsJson(const SegmentsResult& r) {
  records::SpeedRecord s;
  s.kind = r.evaluation ? "evaluation segments" : "segments";
  s.changed = r.changed;
  s.device = r.device;
  s.steps_per_segment = r.steps;
  s.steps_sized = r.sized;
  s.rounds = r.rounds;
  s.baseline_rates = r.baseline_rates;
  s.variant_rates = r.variant_rates;
  s.variant_first = json::array();
  for (bool first : r.variant_first) s.variant_first.push_back(first);
  s.noise = r.noise;
  s.estimate = r.estimate;
  s.other_cores = r.other_cores;
  s.set_aside = r.set_aside;
  s.load_resolution_cores = r.load_resolution_cores;
  s.busiest_others = proto::toJson(r.busiest_others);
  s.contended = r.contended;
  s.cannot_be_faster = r.cannot_be_faster;
  s.total_s = r.total_s;
  if (r.evaluation) {
    // One evaluation's seconds per round (the validation split over each rate), and the baseline's
    // training rate from its warm-up: what a try weighs the evaluations with.
    const auto seconds = [&](const std::vector<double>& rates) {
      std::vector<double> out;
      for (double rate : rates) out.push_back(rate > 0 ? double(r.val_samples) / rate : 0.0);
      return out;
    };
    s.baseline_eval_s = seconds(r.baseline_rates);
    s.variant_eval_s = seconds(r.variant_rates);
    s.baseline_train_rates = std::vector<double>{r.train_rate};
  }
  return records::speedRecordJson(s);
}

render::Table segmentsTable(const SegmentsResult& r) {
  render::Table t;
  t.title = std::string(r.evaluation ? "Interleaved evaluations in one process: " : "Interleaved segments in one process: ") + r.changed;
  t.columns = {{"round", "Round", ""}, {"baseline", "Baseline samples/s", "1/s"}, {"variant", "Variant samples/s", "1/s"},
               {"ratio", "Variant ÷ baseline", "x"}};
  for (int i = 0; i < r.rounds; ++i) {
    const double a = r.baseline_rates[size_t(i)], v = r.variant_rates[size_t(i)];
    const bool first = size_t(i) < r.variant_first.size() && r.variant_first[size_t(i)];
    t.rows.push_back({render::Cell::str(std::to_string(i + 1) + (first ? " (variant first)" : "")),
                      render::Cell::num(wb::fmtRate(a), a), render::Cell::num(wb::fmtRate(v), v),
                      render::Cell::num(wb::fmtSpeedup(v / a), v / a)});
  }
  t.notes.push_back(std::string(r.evaluation ? "Validation samples/s (" + std::to_string(r.steps) + " evaluation pass(es) a segment) × "
                                             : "Train samples/s (data wait included) × ") +
                    (r.contended ? std::string("contended: another process used ") + wb::fmtFixed(r.other_cores, 1) +
                                       " cores in one segment of nearly every round; no verdict is taken from it"
                                 : stats::formatEstimate(r.estimate)) +
                    " — " + r.estimate.method + ", " + std::to_string(r.steps) + (r.evaluation ? " passes" : " steps") + " a segment" +
                    (r.sized ? (r.evaluation ? " (sized from the warm-up's pass time)" : " (sized from the warm-up's step time)") : "") + " on " + r.device + ".");
  t.notes.push_back(stats::describeRule(r.looks, "rounds"));
  if (r.cannot_be_faster)
    t.notes.push_back("The rounds stopped after " + std::to_string(r.rounds) + ": the question was only whether it is faster, "
                      "and under a 10 % chance was left that the last round would say so.");
  if (r.set_aside > 0) {
    const std::string who = describeLoads(r.busiest_others);
    t.notes.push_back(std::to_string(r.set_aside) + " round(s) set aside: another process used the CPU during one of their "
                      "segments and not the other (up to " + wb::fmtFixed(r.other_cores, 1) + " cores" +
                      (who.empty() ? "" : "; busiest: " + who) + "); rounds slowed alike count.");
  }
  if (r.load_resolution_cores >= kContendedOtherCores)
    t.notes.push_back("The segments were too short for the kernel's CPU accounting (one clock tick a core) to tell another "
                      "process's load within ±" + wb::fmtFixed(r.load_resolution_cores, 1) +
                      " cores, so no round was set aside for a smaller one: longer segments (--min-segment-s, --steps) resolve it.");
  t.notes.push_back(std::string(r.evaluation ? "Evaluation time only" : "Throughput only") +
                    ": `workbench-cli try` composes it with samples to target into the time to target.");
  return t;
}

}  // namespace wb::probe
