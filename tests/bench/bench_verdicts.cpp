// How often the verdicts are wrong and what they can see, measured: the full adaptive procedure
// (and fixed numbers of pairs) simulated over recorded runs of this product (traces written by
// bench_noise --trace: tests/data/traces/recorded-2core.json is 40 runs of the default
// experiment on a 2-core host that flips between two speeds), over a quiet host built from the
// figures measured on a quiet one (train samples/s ±1.6 %: `workbench-cli noise --runs 6`), and
// over a two-speed host built from that (16.5k and 10.7k samples/s in stretches of a minute or
// more), with the false-alarm rate of A/A experiments and the smallest effect found with 80 %
// probability (power). Every experiment is decided by the code the runner uses
// (wb/report/verdict_sim.h). Never asserts.
//
//   bench_verdicts [--trace FILE ...] [--experiments 2000] [--quiet-band 0.016]
//                  [--fast 16500 --slow 10700 --stretch 60]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "wb/report/table.h"
#include "wb/report/verdict_sim.h"

namespace {
using wb::report::Cell;
using wb::report::Sequential;

struct Plan {
  std::string name;
  Sequential seq;
};

std::vector<Plan> plans() {
  std::vector<Plan> out;
  for (int n : {3, 5, 10}) {
    Sequential s;
    s.fixed_pairs = n;
    out.push_back({std::to_string(n) + " pairs (one look)", s});
  }
  for (int n : {5, 10}) {
    Sequential s;
    s.max_pairs = n;
    out.push_back({"adaptive, up to " + std::to_string(n) + " pairs", s});
  }
  return out;
}

std::string pct(double x) { return std::isfinite(x) ? wb::report::fmtFixed(x * 100, 1) + " %" : "–"; }

wb::report::Table tableFor(const wb::report::RunTrace& trace, int experiments) {
  wb::report::Table t;
  t.title = trace.source;
  t.columns = {{"plan", "Plan", ""},        {"aa", "A/A called (false alarms)", "%"}, {"aa_pairs", "A/A mean pairs", ""},
               {"p80", "Effect found 80 %", "%"}, {"p10", "Power at +10 %", "%"},    {"p5", "Power at +5 %", "%"}};
  for (const auto& p : plans()) {
    const auto aa = wb::report::simulateExperiments(trace, 0.0, p.seq, experiments, 101);
    const auto at10 = wb::report::simulateExperiments(trace, 0.10, p.seq, experiments, 103);
    const auto at5 = wb::report::simulateExperiments(trace, 0.05, p.seq, experiments, 107);
    const double d = wb::report::detectableEffect(trace, p.seq, 0.8, experiments / 2, 109);
    t.rows.push_back({Cell::str(p.name), Cell::num(pct(aa.calledRate()), aa.calledRate() * 100),
                      Cell::num(wb::report::fmtFixed(aa.mean_pairs, 1), aa.mean_pairs), Cell::num(pct(d), d * 100),
                      Cell::num(pct(at10.rate(at10.faster)), at10.rate(at10.faster) * 100),
                      Cell::num(pct(at5.rate(at5.faster)), at5.rate(at5.faster) * 100)});
  }
  t.notes.push_back(std::to_string(experiments) + " simulated experiments per cell (" + std::to_string(trace.runs.size()) +
                    " runs in the trace; windows of consecutive runs, the variant of each pair drawn at random). "
                    "Effect found 80 %: the smallest speedup called faster in at least 80 % of experiments.");
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  int experiments = 2000;
  double fast = 16500, slow = 10700, stretch = 60, quietBand = 0.016;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? argv[++i] : ""; };
    if (!std::strcmp(argv[i], "--trace")) files.push_back(next());
    else if (!std::strcmp(argv[i], "--experiments")) experiments = std::max(100, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--fast")) fast = std::atof(next());
    else if (!std::strcmp(argv[i], "--slow")) slow = std::atof(next());
    else if (!std::strcmp(argv[i], "--stretch")) stretch = std::atof(next());
    else if (!std::strcmp(argv[i], "--quiet-band")) quietBand = std::atof(next());
  }
  if (files.empty()) files.push_back(WB_SOURCE_DIR "/tests/data/traces/recorded-2core.json");
  double runS = 6.2;
  for (const auto& f : files) {
    auto trace = wb::report::loadTrace(f);
    if (!trace.ok()) {
      std::fprintf(stderr, "bench_verdicts: %s\n", trace.error().message.c_str());
      return 2;
    }
    if (!trace->runs.empty() && trace->runs.front().run_wall_s > 0) runS = trace->runs.front().run_wall_s;
    std::printf("%s\n", wb::report::renderText(tableFor(*trace, experiments)).c_str());
  }
  const auto quiet = wb::report::quietTrace(fast, quietBand, runS, 2.57, 4000, 5,
                                            "built: a quiet host, " + std::to_string(int(fast)) + " samples/s ±" +
                                                wb::report::fmtFixed(quietBand * 100, 1) + " % (measured on a quiet 2-core host)");
  std::printf("%s\n", wb::report::renderText(tableFor(quiet, experiments)).c_str());
  const auto two = wb::report::twoSpeedTrace(quiet, fast, slow, stretch, 4000, 7);
  std::printf("%s\n", wb::report::renderText(tableFor(two, experiments)).c_str());
  return 0;
}
