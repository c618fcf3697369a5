// How often the composed time-to-target verdict is wrong and what it can see, by simulation
// (wb/stats/composed_sim.h): throughput from interleaved rounds of segments in one process
// (a segment's log rate scatters with sd "host noise" around its round's level), samples to target
// from reference runs and the variant's runs (ln samples scatter with sd "seed spread"), start-up
// and evaluations beside them; each experiment decided as the product decides. Per noise level:
// the A/A false-alarm rate for a lever that changes the math (its own runs to the target, as many
// as the reference) and for one that keeps it (no runs), the power against +10 % throughput (the
// math kept, and changed with the samples unchanged) and against 10 % fewer samples, and the
// reference runs a 5 % convergence change needs at that seed spread. Never asserts.
//
// With --trace RUN_DIR (repeatable): the same on recorded traces instead of Gaussian noise: each
// run's rank-0 training rate over its log intervals, in time order (a long run on a quiet host, one
// on a host whose load comes and goes...), cut into segments of --points-per-segment points, and
// beside it the reference method on the same trace: --pairs interleaved pairs of whole runs of
// --points-per-run points each, for a change that keeps the math (A/A and +10 % throughput).
//
//   bench_composed [--experiments 2000] [--rounds 8] [--power]   (--power: the ladder's power table only)
//   bench_composed --trace RUN_DIR [--trace RUN_DIR...] [--points-per-segment 10] [--points-per-run 90] [--pairs 3]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "wb/stats/composed_sim.h"
#include "wb/stats/convergence.h"
#include "wb/records/run_record.h"
#include "wb/render/table.h"

namespace {
using wb::render::Cell;
using wb::stats::ComposedModel;
using wb::stats::ComposedOutcome;

std::string pct(double x) { return std::isfinite(x) ? wb::fmtFixed(x * 100, 1) + " %" : "–"; }
Cell pctCell(double x) { return Cell::num(pct(x), x * 100); }

ComposedModel modelOf(double host, double spread, int n, bool keeps, int rounds) {
  ComposedModel m;
  m.host_noise = host;
  m.seed_spread = spread;
  m.reference_runs = n;
  m.variant_runs = keeps ? 0 : n;
  m.rounds = rounds;
  return m;
}

std::vector<Cell> rowOf(double host, double spread, int n, int rounds, int experiments, uint64_t seed) {
  const ComposedModel changes = modelOf(host, spread, n, false, rounds), keeps = modelOf(host, spread, n, true, rounds);
  const ComposedOutcome aaChanges = wb::stats::simulateComposed(changes, experiments, seed);
  const ComposedOutcome aaKeeps = wb::stats::simulateComposed(keeps, experiments, seed + 1);
  ComposedModel fastKeeps = keeps, fastChanges = changes, fewer = changes;
  fastKeeps.throughput_effect = fastChanges.throughput_effect = 0.10;
  fewer.samples_effect = 1 / 1.1 - 1;
  const ComposedOutcome pKeeps = wb::stats::simulateComposed(fastKeeps, experiments, seed + 2);
  const ComposedOutcome pChanges = wb::stats::simulateComposed(fastChanges, experiments, seed + 3);
  const ComposedOutcome pFewer = wb::stats::simulateComposed(fewer, experiments, seed + 4);
  // A lever that keeps the math and acts in the evaluation too: its evaluations timed after the
  // training's rounds (their fewest), the same effect on both.
  ComposedModel keepsEval = keeps;
  keepsEval.eval_rounds = wb::stats::kSegmentMinRounds;
  const ComposedOutcome aaKeepsEval = wb::stats::simulateComposed(keepsEval, experiments, seed + 5);
  keepsEval.throughput_effect = keepsEval.eval_effect = 0.10;
  const ComposedOutcome pKeepsEval = wb::stats::simulateComposed(keepsEval, experiments, seed + 6);
  const int runs = wb::stats::runsToDetect(spread);
  return {Cell::num(pct(host), host * 100),
          Cell::num(pct(spread), spread * 100),
          Cell::num(std::to_string(n), n),
          pctCell(aaChanges.calledRate()),
          pctCell(aaKeeps.calledRate()),
          pctCell(aaKeepsEval.calledRate()),
          pctCell(pKeeps.rate(pKeeps.faster)),
          pctCell(pKeepsEval.rate(pKeepsEval.faster)),
          pctCell(pChanges.rate(pChanges.faster)),
          pctCell(pFewer.rate(pFewer.faster)),
          runs > 0 ? Cell::num(std::to_string(runs), runs) : Cell::str("> 1000")};
}

// The variant's runs looked at as they finish (variant_looks.h) against all of them at one look:
// the share of experiments called faster (slower for an A/A: its false alarms) and the runs they
// took, for changes of the math from none to large, at seed spreads from lenet's down.
wb::render::Table looksTable(int experiments) {
  wb::render::Table t;
  t.title = "The variant's runs to the target: looked at as they finish, against all 5 at one look (simulated)";
  t.columns = {{"change", "Change", ""},        {"spread", "Seed spread", "%"},
               {"called_looks", "Called, looked at", "%"}, {"runs_looks", "Variant runs, looked at", ""},
               {"called_futility", "Called, + futility", "%"}, {"runs_futility", "Runs, + futility", ""},
               {"called_fixed", "Called, all 5", "%"}, {"true", "True speedup", "x"}};
  struct Change {
    const char* name;
    double throughput, samples;
  };
  uint64_t seed = 1000;
  for (const Change& c : {Change{"none (A/A)", 0, 0}, Change{"2x throughput", 1.0, 0}, Change{"1.3x throughput", 0.3, 0},
                          Change{"25 % fewer samples", 0, -0.25}, Change{"10 % fewer samples", 0, -0.10},
                          Change{"1.3x thr., 28 % more samples", 0.3, 0.28}, Change{"0.8x throughput", -0.2, 0},
                          Change{"2x throughput, 30 % more samples", 1.0, 0.3}})
    for (double spread : {0.05, 0.10, 0.18}) {
      ComposedModel m = modelOf(0.02, spread, 5, false, wb::stats::kSegmentMaxRounds);
      m.throughput_effect = c.throughput, m.samples_effect = c.samples;
      ComposedModel fixed = m, futile = m;
      fixed.fixed_variant_runs = true;
      futile.futility = true;
      const ComposedOutcome looked = wb::stats::simulateComposed(m, experiments, ++seed);
      const ComposedOutcome once = wb::stats::simulateComposed(fixed, experiments, seed);
      const ComposedOutcome cut = wb::stats::simulateComposed(futile, experiments, seed);
      const bool aa = c.throughput == 0 && c.samples == 0;
      const double calledLooks = aa ? looked.calledRate() : looked.rate(looked.faster);
      const double calledOnce = aa ? once.calledRate() : once.rate(once.faster);
      const double calledCut = aa ? cut.calledRate() : cut.rate(cut.faster);
      const double truth = wb::stats::trueSpeedup(m);
      t.rows.push_back({Cell::str(c.name), Cell::num(pct(spread), spread * 100), pctCell(calledLooks),
                        Cell::num(wb::fmtFixed(looked.meanVariantRuns(), 2), looked.meanVariantRuns()),
                        pctCell(calledCut), Cell::num(wb::fmtFixed(cut.meanVariantRuns(), 2), cut.meanVariantRuns()),
                        pctCell(calledOnce),
                        Cell::num(wb::fmtFixed(truth, 2), truth)});
    }
  t.notes.push_back(std::to_string(experiments) + " experiments per cell; 5 reference runs, host noise 2 %; called: faster "
                    "(for the A/A: faster or slower, its false alarms). Looked at: after each of the variant's runs from "
                    "the second, stopping once clear, surely within the threshold or a bound below it. + futility: also once "
                    "it can no longer be shown faster (the ladder's and the search's rule).");
  return t;
}

// The ladder's chance to keep a lever that changes the math (futility on, 5 reference runs and at
// most 5 of the variant's, host noise 2 %), 1.1× to 1.5× faster to the target by its throughput
// (its samples to target unchanged: more devices at a scaled lr, bf16) or by its samples to target
// (its throughput unchanged), at seed spreads of 5 % (resnet18's, mnist-cnn's), 10 % and 18 %
// (lenet's at one epoch); with the false keeps (1.0×) beside it; now and under the rule before
// (the throughput's rounds stopping once clear whatever the math).
wb::render::Table powerTable(int experiments) {
  wb::render::Table t;
  t.title = "The ladder's chance to keep a lever that changes the math (simulated)";
  t.columns = {{"lever", "Lever to target", "x"},  {"by", "By", ""},
               {"spread", "Seed spread", "%"},     {"kept", "Kept", "%"},
               {"runs", "Variant runs", ""},       {"kept_before", "Kept, rule before", "%"},
               {"runs_before", "Runs, rule before", ""}};
  uint64_t seed = 7000;
  double runs = 0, runsBefore = 0;
  int cells = 0;
  for (double spread : {0.05, 0.10, 0.18})
    for (double speedup : {1.0, 1.1, 1.2, 1.3, 1.5})
      for (bool byThroughput : {true, false}) {
        if (speedup == 1.0 && !byThroughput) continue;
        ComposedModel m = wb::stats::leverToTarget(modelOf(0.02, spread, 5, false, wb::stats::kSegmentMaxRounds), speedup, byThroughput);
        m.futility = true;
        ComposedModel before = m;
        before.rounds_until_clear = true;
        const ComposedOutcome now = wb::stats::simulateComposed(m, experiments, ++seed);
        const ComposedOutcome then = wb::stats::simulateComposed(before, experiments, seed);
        runs += now.meanVariantRuns(), runsBefore += then.meanVariantRuns(), ++cells;
        t.rows.push_back({Cell::num(wb::fmtFixed(speedup, 1) + "×", speedup),
                          Cell::str(speedup == 1.0 ? "none (A/A)" : byThroughput ? "throughput" : "samples to target"),
                          Cell::num(pct(spread), spread * 100), pctCell(now.rate(now.faster)),
                          Cell::num(wb::fmtFixed(now.meanVariantRuns(), 2), now.meanVariantRuns()), pctCell(then.rate(then.faster)),
                          Cell::num(wb::fmtFixed(then.meanVariantRuns(), 2), then.meanVariantRuns())});
      }
  t.notes.push_back(std::to_string(experiments) + " experiments per cell. Kept: called faster (for 1.0×, its false keeps). "
                    "The variant's runs on average over the table: " + wb::fmtFixed(runs / cells, 2) + " now, " +
                    wb::fmtFixed(runsBefore / cells, 2) + " under the rule before.");
  t.notes.push_back("Now: the throughput of a change of the math takes all its rounds (stats::leastRounds), so the composed "
                    "verdict is judged at its last look's α, not the 0.1 % of a third round that settled it.");
  return t;
}

// A change that keeps the math: its segments' rounds until clear, against the same with futility
// (the ladder's: the rounds also stop once it can no longer be shown faster): how often each calls
// it faster (for the A/A and a slower change: faster or slower) and the rounds each took.
wb::render::Table roundsTable(int experiments) {
  wb::render::Table t;
  t.title = "A change that keeps the math: the segments' rounds until clear, with and without futility (simulated)";
  t.columns = {{"change", "Throughput change", ""}, {"noise", "Host noise", "%"},
               {"called", "Called", "%"},           {"rounds", "Rounds", ""},
               {"called_futility", "Called, + futility", "%"}, {"rounds_futility", "Rounds, + futility", ""}};
  uint64_t seed = 5000;
  for (double effect : {0.0, 0.02, 0.05, 0.10, -0.05})
    for (double noise : {0.02, 0.05}) {
      ComposedModel m = modelOf(noise, 0.05, 5, true, wb::stats::kSegmentMaxRounds), cut;
      m.throughput_effect = effect;
      cut = m;
      cut.futility = true;
      const ComposedOutcome plain = wb::stats::simulateComposed(m, experiments, ++seed);
      const ComposedOutcome futile = wb::stats::simulateComposed(cut, experiments, seed);
      const bool faster = effect > 0;
      const auto called = [faster](const ComposedOutcome& o) { return faster ? o.rate(o.faster) : o.calledRate(); };
      t.rows.push_back({Cell::str(effect == 0 ? std::string("none (A/A)") : wb::fmtSpeedup(1 + effect)),
                        Cell::num(pct(noise), noise * 100), pctCell(called(plain)),
                        Cell::num(wb::fmtFixed(plain.meanRounds(), 2), plain.meanRounds()), pctCell(called(futile)),
                        Cell::num(wb::fmtFixed(futile.meanRounds(), 2), futile.meanRounds())});
    }
  t.notes.push_back(std::to_string(experiments) + " experiments per cell; at least " +
                    std::to_string(wb::stats::kSegmentMinRounds) + " and at most " +
                    std::to_string(wb::stats::kSegmentMaxRounds) + " rounds; called: faster (for the A/A and a slower "
                    "change: faster or slower).");
  return t;
}

struct TraceOptions {
  std::vector<std::string> runs;
  int points_per_segment = 10, points_per_run = 90, pairs = 3;
};

// A run's rank-0 training rate over its log intervals (the first interval, warm-up, left out),
// and the other processes' CPU over each (cores; 0 where the event has none).
struct Trace {
  std::vector<double> rates, other;
};

Trace traceOf(const std::string& dir) {
  Trace out;
  auto run = wb::records::loadRun(dir);
  if (!run.ok()) return out;
  for (size_t i = 1; i < run->steps.size(); ++i) {
    const auto& s = run->steps[i];
    if (!(s.samples_per_s > 0)) continue;
    out.rates.push_back(s.samples_per_s);
    const double other = s.cpu ? s.cpu->machine_busy_cores - s.cpu->process_cores : 0;
    out.other.push_back(std::isfinite(other) ? std::max(0.0, other) : 0);
  }
  return out;
}

// The sd of ln(rate) over segments of k points: the trace's host noise at the segments' scale.
double segmentNoise(const std::vector<double>& trace, int k) {
  std::vector<double> logs;
  for (size_t at = 0; at + size_t(k) <= trace.size(); at += size_t(k)) {
    double seconds = 0;
    for (int i = 0; i < k; ++i) seconds += 1 / trace[at + size_t(i)];
    logs.push_back(std::log(k / seconds));
  }
  double mean = 0, ss = 0;
  for (double x : logs) mean += x / double(logs.size());
  for (double x : logs) ss += (x - mean) * (x - mean);
  return logs.size() > 1 ? std::sqrt(ss / double(logs.size() - 1)) : NAN;
}

wb::render::Table traceTable(const TraceOptions& o, int experiments, int rounds, bool noContention) {
  wb::render::Table t;
  t.title = "On recorded traces: the composed verdict against whole-run pairs, math kept";
  t.columns = {{"trace", "Trace", ""}, {"points", "Points", ""}, {"noise", "Segment noise", "%"}, {"other", "Other load", "cores"},
               {"aa_keeps", "A/A called, by parts (math kept)", "%"}, {"aa_changes", "A/A called, by parts (math changes, 5 % spread)", "%"},
               {"p_keeps", "Power +10 %, by parts", "%"}, {"c_parts", "No verdict (contended), by parts", "%"},
               {"aa_alt", "A/A called, by parts, order alternating", "%"},
               {"aa_whole", "A/A called, whole-run pairs", "%"}, {"p_whole", "Power +10 %, whole-run pairs", "%"},
               {"c_whole", "No verdict (contended), whole runs", "%"}};
  uint64_t seed = 7;
  for (const auto& dir : o.runs) {
    const Trace recorded = traceOf(dir);
    const std::vector<double>& trace = recorded.rates;
    if (trace.size() < 10) {
      std::fprintf(stderr, "%s: fewer than 10 step events with a rate: not a trace\n", dir.c_str());
      continue;
    }
    ComposedModel keeps = modelOf(0, 0.05, 5, true, rounds), changes = modelOf(0, 0.05, 5, false, rounds);
    keeps.trace = changes.trace = &trace;
    if (!noContention) keeps.trace_other_cores = changes.trace_other_cores = &recorded.other;
    keeps.trace_points_per_segment = changes.trace_points_per_segment = o.points_per_segment;
    ComposedModel fast = keeps;
    fast.throughput_effect = 0.10;
    const auto aaK = wb::stats::simulateComposed(keeps, experiments, seed);
    const auto aaC = wb::stats::simulateComposed(changes, experiments, seed + 1);
    const auto pK = wb::stats::simulateComposed(fast, experiments, seed + 2);
    ComposedModel alternating = keeps;
    alternating.alternate = true;
    const auto aaAlt = wb::stats::simulateComposed(alternating, experiments, seed + 5);
    const auto aaW = wb::stats::simulateWholeRunPairs(keeps, o.pairs, o.points_per_run, experiments, seed + 3);
    const auto pW = wb::stats::simulateWholeRunPairs(fast, o.pairs, o.points_per_run, experiments, seed + 4);
    seed += 10;
    const size_t slash = dir.find_last_of('/', dir.size() > 1 ? dir.size() - 2 : 0);
    double other = 0;
    for (double x : recorded.other) other += x / double(recorded.other.size());
    t.rows.push_back({Cell::str(slash == std::string::npos ? dir : dir.substr(slash + 1)), Cell::num(std::to_string(trace.size()), double(trace.size())),
                      pctCell(segmentNoise(trace, o.points_per_segment)), Cell::num(wb::fmtFixed(other, 2), other),
                      pctCell(aaK.calledRate()), pctCell(aaC.calledRate()), pctCell(pK.rate(pK.faster)), pctCell(aaK.rate(aaK.contended)), pctCell(aaAlt.calledRate()),
                      pctCell(aaW.calledRate()), pctCell(pW.rate(pW.faster)), pctCell(aaW.rate(aaW.contended))});
  }
  t.notes.push_back(std::to_string(experiments) + " experiments per cell, each from a random point of the trace (wrapping): by parts " +
"up to " + std::to_string(rounds) + " rounds of two segments of " + std::to_string(o.points_per_segment) +
                    " points until the verdict is clear, which goes first a coin (as the probe); whole runs " + std::to_string(o.pairs) + " pairs of " +
                    std::to_string(o.points_per_run) + " points a run, one look at 5 %.");
  t.notes.push_back(noContention ? "Without the contention rule: every experiment decided whatever the other load."
                                 : "The contention rule as the product applies it: a round of segments, like a pair of whole runs, counts "
                                   "only when neither was contended (0.3 cores of other load) or both were slowed alike; with fewer "
                                   "than two counted, no verdict. "
                                   "A/A and power are over all experiments, the contended ones included (they call nothing).");
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int experiments = 2000, rounds = wb::stats::kSegmentMaxRounds;
  bool power = false;
  TraceOptions traces;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? argv[++i] : ""; };
    if (!std::strcmp(argv[i], "--experiments")) experiments = std::max(100, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--rounds")) rounds = std::max(2, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--trace")) traces.runs.push_back(next());
    else if (!std::strcmp(argv[i], "--points-per-segment")) traces.points_per_segment = std::max(1, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--points-per-run")) traces.points_per_run = std::max(1, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--pairs")) traces.pairs = std::max(2, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--power")) power = true;
  }
  if (power) {
    std::printf("%s\n", wb::render::renderText(powerTable(experiments)).c_str());
    return 0;
  }
  if (!traces.runs.empty()) {
    std::printf("%s\n", wb::render::renderText(traceTable(traces, experiments, rounds, false)).c_str());
    std::printf("%s\n", wb::render::renderText(traceTable(traces, experiments, rounds, true)).c_str());
    return 0;
  }
  wb::render::Table t;
  t.title = "Composed time to target: false alarms and power (simulated)";
  t.columns = {{"host", "Host noise", "%"},          {"spread", "Seed spread", "%"},
               {"n", "Reference runs", ""},          {"aa_changes", "A/A called, math changes", "%"},
               {"aa_keeps", "A/A called, math kept", "%"}, {"aa_keeps_eval", "A/A called, math kept, eval timed", "%"},
               {"p_keeps", "Power +10 % thr., math kept", "%"}, {"p_keeps_eval", "Power +10 % thr. and eval, eval timed", "%"},
               {"p_changes", "Power +10 % thr., math changes", "%"}, {"p_fewer", "Power 10 % fewer samples", "%"},
               {"runs5", "Runs for a 5 % change", ""}};
  uint64_t seed = 1;
  for (double host : {0.01, 0.05, 0.10, 0.20})
    for (double spread : {0.02, 0.05, 0.10, 0.15})
      for (int n : {5, 10}) {
        t.rows.push_back(rowOf(host, spread, n, rounds, experiments, seed));
        seed += 10;
      }
  const ComposedModel m;
  t.notes.push_back("Eval timed: a lever that keeps the math and acts in the evaluation too; its evaluations from " +
                    std::to_string(wb::stats::kSegmentMinRounds) +
                    " rounds of evaluation segments after the training's, with the same noise (its power column: "
                    "+10 % on both).");
  t.notes.push_back(std::to_string(experiments) + " simulated experiments per cell; throughput from " +
                    std::to_string(rounds) + " interleaved rounds until the verdict is clear, as the probe (noise: sd of one segment's log rate).");
  t.notes.push_back("Baseline: " + wb::fmtFixed(m.startup_s, 0) + " s start-up, " +
                    wb::fmtFixed(m.samples / m.rate, 0) + " s of training, an evaluation of " +
                    wb::fmtFixed(m.eval_s, 1) + " s every " + std::to_string(int(m.samples_per_evaluation)) +
                    " samples. The variant that changes the math has as many runs to the target as the reference.");
  t.notes.push_back("Runs for a 5 % change: reference runs (and as many variant runs) that detect 5 % more or fewer "
                    "samples to target with 80 % power at that seed spread.");
  std::printf("%s\n", wb::render::renderText(t).c_str());
  std::printf("%s\n", wb::render::renderText(powerTable(experiments)).c_str());
  std::printf("%s\n", wb::render::renderText(looksTable(experiments)).c_str());
  std::printf("%s\n", wb::render::renderText(roundsTable(experiments)).c_str());
  return 0;
}
