// How often the verdicts are wrong and what they can see, measured: the full adaptive procedure
// (and fixed numbers of pairs) simulated over every noise model the promise covers, with the
// false-alarm rate of A/A experiments (faster + slower) and the smallest effect found with 80 %
// probability (power). The models: plain noise (runs' sd 1 to 20 %), a host at two speeds
// (16.5k / 10.7k samples/s) flipping between runs 10, 40 or 70 % of the time, seen by the host
// speed check and unseen by it, the same host in stretches of a minute or more, a quiet host built
// from measured figures (train samples/s ±1.6 %: `workbench-cli noise --runs 6`), and recorded
// traces (bench_noise --trace: tests/data/traces/recorded-2core.json is 40 runs of the default
// experiment on a 2-core host that flips between two speeds). Built traces hold enough runs that
// no two experiments share one; a recorded trace is taken whole (every window, every choice of
// variants). Every experiment is decided by the code the runner uses (wb/stats/verdict_sim.h).
// Never asserts.
//
//   bench_verdicts [--trace FILE ...] [--experiments 20000] [--power-experiments 2000]
//                  [--quiet-band 0.016] [--fast 16500 --slow 10700 --stretch 60]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "wb/render/table.h"
#include "wb/stats/verdict_sim.h"

namespace {
using wb::render::Cell;
using wb::stats::RunTrace;
using wb::stats::Sequential;

struct Plan {
  std::string name;
  Sequential seq;
};

std::vector<Plan> plans() {
  std::vector<Plan> out;
  for (int n : {3, 5, 10}) {
    Sequential s;
    s.fixed_pairs = n;
    out.push_back({std::to_string(n) + " pairs", s});
  }
  for (int n : {5, 10}) {
    Sequential s;
    s.max_pairs = n;
    out.push_back({"adaptive ≤ " + std::to_string(n) + (n == 5 ? " (default)" : ""), s});
  }
  return out;
}

// A model: a trace and how many experiments it is simulated with (kEveryWindow for a recorded one).
struct Model {
  std::string name;
  RunTrace trace;
  bool whole = false;
  double floorBand = 0;  // the band `workbench-cli noise` measures on this host (0: unmeasured)
};

Sequential onHost(Sequential seq, const Model& m) {
  seq.floor_band = m.floorBand;
  return seq;
}

// The band a long A/A calibration measures on the trace's host (its runs' spread).
double measuredBand(const RunTrace& t) {
  std::vector<double> times;
  for (size_t i = 0; i < std::min<size_t>(t.runs.size(), 4000); ++i) times.push_back(1 / t.runs[i].train_samples_per_s);
  return wb::stats::bandOfRepeats(times);
}

std::string pct(double x) { return std::isfinite(x) ? wb::fmtFixed(x * 100, 1) + " %" : "–"; }

wb::render::Table emptyTable(const std::string& title) {
  wb::render::Table t;
  t.title = title;
  t.columns.push_back({"model", "Model", ""});
  for (const auto& p : plans()) t.columns.push_back({p.name, p.name, "%"});
  return t;
}

// One row per model, one cell per plan: what `cell` measures, as a percentage.
wb::render::Table tableOf(const std::string& title, const std::vector<Model>& models,
                          const std::function<double(const Model&, const Sequential&)>& cell) {
  wb::render::Table t = emptyTable(title);
  for (const auto& m : models) {
    std::vector<Cell> row{Cell::str(m.name)};
    for (const auto& p : plans()) {
      const double v = cell(m, p.seq);
      row.push_back(Cell::num(pct(v), v * 100));
    }
    t.rows.push_back(row);
    std::fflush(stdout);
  }
  return t;
}

struct Options {
  std::vector<std::string> files;
  int experiments = 20000, powerExperiments = 2000;
  double fast = 16500, slow = 10700, stretch = 60, quietBand = 0.016;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? argv[++i] : ""; };
    if (!std::strcmp(argv[i], "--trace")) o.files.push_back(next());
    else if (!std::strcmp(argv[i], "--experiments")) o.experiments = std::max(100, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--power-experiments")) o.powerExperiments = std::max(100, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--fast")) o.fast = std::atof(next());
    else if (!std::strcmp(argv[i], "--slow")) o.slow = std::atof(next());
    else if (!std::strcmp(argv[i], "--stretch")) o.stretch = std::atof(next());
    else if (!std::strcmp(argv[i], "--quiet-band")) o.quietBand = std::atof(next());
  }
  if (o.files.empty()) o.files.push_back(WB_SOURCE_DIR "/tests/data/traces/recorded-2core.json");
  return o;
}

// Every model, built traces long enough that no two of `experiments` experiments of up to 10
// pairs share a run.
bool buildModels(const Options& o, std::vector<Model>& models) {
  double runS = 6.2;
  for (const auto& f : o.files) {
    auto trace = wb::stats::loadTrace(f);
    if (!trace.ok()) {
      std::fprintf(stderr, "bench_verdicts: %s\n", trace.error().message.c_str());
      return false;
    }
    if (!trace->runs.empty() && trace->runs.front().run_wall_s > 0) runS = trace->runs.front().run_wall_s;
    models.push_back({"recorded: " + std::to_string(trace->runs.size()) + " runs (" + f.substr(f.rfind('/') + 1) + ")",
                      *trace, true});
  }
  const int runs = 20 * o.experiments;
  uint64_t seed = 21;
  for (double sd : {0.01, 0.03, 0.08, 0.12, 0.20})
    models.push_back({"plain noise, sd " + pct(sd), wb::stats::noiseTrace(sd, runs, seed++), false});
  const auto quiet = wb::stats::quietTrace(o.fast, o.quietBand, runS, 2.57, 4000, 5, "quiet");
  for (bool seen : {true, false})
    for (double p : {0.1, 0.4, 0.7})
      models.push_back({"two speeds, flips " + pct(p) + (seen ? "" : ", unseen by the check"),
                        wb::stats::flipTrace(quiet, o.fast, o.slow, p, runs, seed++, seen), false});
  for (double p : {0.4, 0.7}) {
    Model m{"two speeds, flips " + pct(p) + ", unseen, band measured",
            wb::stats::flipTrace(quiet, o.fast, o.slow, p, runs, seed++, false), false};
    m.floorBand = measuredBand(m.trace);
    m.name += " (±" + pct(m.floorBand) + ")";
    models.push_back(m);
  }
  models.push_back({"two speeds, stretches ≥ " + wb::fmtFixed(o.stretch, 0) + " s",
                    wb::stats::twoSpeedTrace(quiet, o.fast, o.slow, o.stretch, runs, 7), false});
  models.push_back({"quiet host ±" + pct(o.quietBand),
                    wb::stats::quietTrace(o.fast, o.quietBand, runS, 2.57, runs, 5, "quiet"), false});
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::vector<Model> models;
  if (!buildModels(o, models)) return 2;
  auto aa = tableOf("A/A experiments called faster or slower (false alarms; the promise: ≤ 5 %)", models,
                    [&](const Model& m, const Sequential& seq) {
                      const auto r = wb::stats::simulateExperiments(
                          m.trace, 0.0, onHost(seq, m), m.whole ? wb::stats::kEveryWindow : o.experiments, 101);
                      return r.calledRate();
                    });
  aa.notes.push_back(std::to_string(o.experiments) + " experiments per cell on built traces (" +
                     std::to_string(20 * o.experiments) +
                     " runs each: no two experiments share a run); a recorded trace taken whole: every start "
                     "and every choice of variants (its windows overlap).");
  std::printf("%s\n", wb::render::renderText(aa).c_str());
  auto power = tableOf("Smallest effect found faster in 80 % of experiments (power)", models,
                       [&](const Model& m, const Sequential& seq) {
                         return wb::stats::detectableEffect(
                             m.trace, onHost(seq, m), 0.8, m.whole ? wb::stats::kEveryWindow : o.powerExperiments, 109);
                       });
  power.notes.push_back(std::to_string(o.powerExperiments) + " experiments per step of the search; – : not even 3×.");
  std::printf("%s\n", wb::render::renderText(power).c_str());
  return 0;
}
