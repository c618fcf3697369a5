// How often the composed time-to-target verdict is wrong and what it can see, by simulation
// (wb/report/composed_sim.h): throughput from interleaved rounds of segments in one process
// (a segment's log rate scatters with sd "host noise" around its round's level), samples to target
// from reference runs and the variant's runs (ln samples scatter with sd "seed spread"), start-up
// and evaluations beside them; each experiment decided as the product decides. Per noise level:
// the A/A false-alarm rate for a lever that changes the math (its own runs to the target, as many
// as the reference) and for one that keeps it (no runs), the power against +10 % throughput (the
// math kept, and changed with the samples unchanged) and against 10 % fewer samples, and the
// reference runs a 5 % convergence change needs at that seed spread. Never asserts.
//
//   bench_composed [--experiments 2000] [--rounds 10]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "wb/report/composed_sim.h"
#include "wb/report/convergence.h"
#include "wb/report/table.h"

namespace {
using wb::report::Cell;
using wb::report::ComposedModel;
using wb::report::ComposedOutcome;

std::string pct(double x) { return std::isfinite(x) ? wb::report::fmtFixed(x * 100, 1) + " %" : "–"; }
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
  const ComposedOutcome aaChanges = wb::report::simulateComposed(changes, experiments, seed);
  const ComposedOutcome aaKeeps = wb::report::simulateComposed(keeps, experiments, seed + 1);
  ComposedModel fastKeeps = keeps, fastChanges = changes, fewer = changes;
  fastKeeps.throughput_effect = fastChanges.throughput_effect = 0.10;
  fewer.samples_effect = 1 / 1.1 - 1;
  const ComposedOutcome pKeeps = wb::report::simulateComposed(fastKeeps, experiments, seed + 2);
  const ComposedOutcome pChanges = wb::report::simulateComposed(fastChanges, experiments, seed + 3);
  const ComposedOutcome pFewer = wb::report::simulateComposed(fewer, experiments, seed + 4);
  const int runs = wb::report::runsToDetect(spread);
  return {Cell::num(pct(host), host * 100),
          Cell::num(pct(spread), spread * 100),
          Cell::num(std::to_string(n), n),
          pctCell(aaChanges.calledRate()),
          pctCell(aaKeeps.calledRate()),
          pctCell(pKeeps.rate(pKeeps.faster)),
          pctCell(pChanges.rate(pChanges.faster)),
          pctCell(pFewer.rate(pFewer.faster)),
          runs > 0 ? Cell::num(std::to_string(runs), runs) : Cell::str("> 1000")};
}

}  // namespace

int main(int argc, char** argv) {
  int experiments = 2000, rounds = 10;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? argv[++i] : ""; };
    if (!std::strcmp(argv[i], "--experiments")) experiments = std::max(100, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--rounds")) rounds = std::max(2, std::atoi(next()));
  }
  wb::report::Table t;
  t.title = "Composed time to target: false alarms and power (simulated)";
  t.columns = {{"host", "Host noise", "%"},          {"spread", "Seed spread", "%"},
               {"n", "Reference runs", ""},          {"aa_changes", "A/A called, math changes", "%"},
               {"aa_keeps", "A/A called, math kept", "%"}, {"p_keeps", "Power +10 % thr., math kept", "%"},
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
  t.notes.push_back(std::to_string(experiments) + " simulated experiments per cell; throughput from " +
                    std::to_string(rounds) + " interleaved rounds (noise: sd of one segment's log rate), one look at 5 %.");
  t.notes.push_back("Baseline: " + wb::report::fmtFixed(m.startup_s, 0) + " s start-up, " +
                    wb::report::fmtFixed(m.samples / m.rate, 0) + " s of training, an evaluation of " +
                    wb::report::fmtFixed(m.eval_s, 1) + " s every " + std::to_string(int(m.samples_per_evaluation)) +
                    " samples. The variant that changes the math has as many runs to the target as the reference.");
  t.notes.push_back("Runs for a 5 % change: reference runs (and as many variant runs) that detect 5 % more or fewer "
                    "samples to target with 80 % power at that seed spread.");
  std::printf("%s\n", wb::report::renderText(t).c_str());
  return 0;
}
