// This machine's run-to-run noise, as a user meets it: N `workbench-cli run` processes of one
// small configuration, interleaved as A/A pairs (A B, B A, ...), read back from their run
// folders. Prints each run; the A/A spread (as the band the verdicts use, wb/stats/stats.h) of
// training throughput, time to target and process wall; whether the host speed check (a kernel
// timed before and after each run, summary.host_speed) narrows it, as a flag or as a
// normalisation; and, for 1, 2, 3, 5 pairs, the width of the paired interval these runs give and
// the smallest effect that many pairs can call faster. With --trace FILE it also writes the runs as
// a run trace (wb/stats/verdict_sim.h) for bench_verdicts and the tests; --default-experiment
// runs the default experiment instead of the small one. Never asserts a time.
//
//   bench_noise [--runs 10] [--keep DIR] [--trace FILE] [--default-experiment] [--set KEY=VALUE ...]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "wb/common/sysinfo.h"
#include "wb/compare/compare.h"
#include "wb/stats/stats.h"
#include "wb/render/table.h"
#include "wb/stats/verdict_sim.h"

extern char** environ;

namespace {
namespace fs = std::filesystem;
using wb::render::Cell;

struct Run {
  bool ok = false;
  double process_s = 0, rate = 0, target_s = NAN, before_ms = 0, after_ms = 0, started_s = 0;
};

double spawnWait(std::vector<std::string> argv) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// What a finished run's folder says (time to target only when `target` is set).
Run readRun(const fs::path& dir, double process_s, std::optional<double> target) {
  Run r;
  r.process_s = process_s;
  auto rec = wb::records::loadRun(dir);
  if (process_s < 0 || !rec.ok()) return r;
  const auto m = wb::compare::computeMetrics(*rec, target);
  r.ok = true;
  r.rate = m.train_samples_per_s.value_or(0);
  r.target_s = m.time_to_target_s.value_or(NAN);
  if (auto h = wb::compare::hostSpeedOf(*rec)) r.before_ms = h->before_ms, r.after_ms = h->after_ms;
  return r;
}

double runProcess(const fs::path& dir, const std::vector<std::string>& sets) {
  std::vector<std::string> argv{WB_CLI_PATH, "run", "--run-dir", dir.string(), "--overwrite"};
  for (const auto& s : sets) argv.insert(argv.end(), {"--set", s});
  return spawnWait(argv);
}

std::string pct(double band) { return std::isfinite(band) ? "±" + wb::fmtFixed(band * 100, 1) + " %" : "–"; }

std::vector<double> times(const std::vector<Run>& runs, double Run::*field, bool inverse = false) {
  std::vector<double> out;
  for (const auto& r : runs)
    if (r.ok && std::isfinite(r.*field) && r.*field > 0) out.push_back(inverse ? 1.0 / (r.*field) : r.*field);
  return out;
}

// The finished runs as a run trace (wb/stats/verdict_sim.h).
void writeTrace(const fs::path& file, const std::vector<Run>& runs, const std::vector<std::string>& sets) {
  wb::stats::RunTrace trace;
  std::string config = sets.empty() ? std::string(" the default experiment") : std::string();
  for (const auto& s : sets) config += " " + s;
  trace.source = "recorded: " + std::to_string(runs.size()) + " runs of" + config + " on " + wb::hostName() + " (" +
                 std::to_string(wb::logicalCores()) + " cores)";
  for (const auto& r : runs)
    if (r.ok && r.rate > 0) trace.runs.push_back({r.started_s, r.rate, r.process_s, r.before_ms, r.after_ms});
  FILE* f = std::fopen(file.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "bench_noise: %s: cannot write it\n", file.c_str());
    return;
  }
  std::fprintf(f, "%s\n", wb::stats::traceJson(trace).dump(1).c_str());
  std::fclose(f);
  std::printf("\nwrote the trace (%zu runs) to %s\n", trace.runs.size(), file.c_str());
}

double maxMin(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  return *std::max_element(v.begin(), v.end()) / *std::min_element(v.begin(), v.end());
}

}  // namespace

int main(int argc, char** argv) {
  int n = 10;
  fs::path keep, traceFile;
  std::vector<std::string> sets{"data.limit_train=4096", "data.limit_val=1000", "train.epochs=2"};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) n = std::max(2, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--keep") && i + 1 < argc) keep = argv[++i];
    else if (!std::strcmp(argv[i], "--trace") && i + 1 < argc) traceFile = argv[++i];
    else if (!std::strcmp(argv[i], "--default-experiment")) sets.clear();
    else if (!std::strcmp(argv[i], "--set") && i + 1 < argc) sets.push_back(argv[++i]);
  }
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
    std::printf("SKIPPED: Fashion-MNIST not found in /usr/share/datasets/fashion-mnist\n");
    return 0;
  }
  const fs::path root = keep.empty() ? fs::temp_directory_path() / ("bench_noise." + std::to_string(::getpid())) : keep;
  std::printf("bench_noise: %d core(s), %d runs of one configuration (", wb::logicalCores(), n);
  for (const auto& s : sets) std::printf(" %s", s.c_str());
  std::printf(" ), whole `workbench-cli run` processes, as A/A pairs A B B A ...\n");

  std::vector<Run> runs;
  std::vector<double> process, started;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    started.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    process.push_back(runProcess(root / ("run-" + std::to_string(i + 1)), sets));
    std::fprintf(stderr, "  run %d: %s\n", i + 1, process.back() > 0 ? "ok" : "FAILED");
  }
  std::optional<double> target;  // the first run's best accuracy
  if (auto rec = wb::records::loadRun(root / "run-1"); rec.ok())
    target = wb::compare::computeMetrics(*rec, std::nullopt).best_val_acc;
  for (int i = 0; i < n; ++i) {
    runs.push_back(readRun(root / ("run-" + std::to_string(i + 1)), process[i], target));
    runs.back().started_s = started[i];
  }

  wb::render::Table t;
  t.title = "Each run (A/A: one configuration)";
  t.columns = {{"run", "Run", ""}, {"side", "Pair side", ""}, {"process_s", "Process s", "s"},
               {"rate", "Train samples/s", "1/s"}, {"target", "Time to target", "s"}, {"kernel", "Host kernel before → after", "ms"}};
  for (int i = 0; i < n; ++i) {
    const Run& r = runs[i];
    const bool a = (i % 4 == 0) || (i % 4 == 3);  // A B B A: the order alternates within pairs
    t.rows.push_back({Cell::str(std::to_string(i + 1)), Cell::str(a ? "A" : "B"),
                      Cell::num(wb::fmtFixed(r.process_s, 2), r.process_s), Cell::num(wb::fmtRate(r.rate), r.rate),
                      std::isfinite(r.target_s) ? Cell::num(wb::fmtFixed(r.target_s, 2), r.target_s) : Cell::str("–"),
                      Cell::str(wb::fmtFixed(r.before_ms, 2) + " → " + wb::fmtFixed(r.after_ms, 2))});
  }
  std::printf("\n%s", wb::render::renderText(t).c_str());

  // The spread, as the band (95 %) and max/min; then with the host speed check.
  const auto perSample = times(runs, &Run::rate, true);
  const auto target_s = times(runs, &Run::target_s);
  const auto processS = times(runs, &Run::process_s);
  const double band = wb::stats::bandOfRepeats(perSample);
  std::vector<double> steady, normalised;
  for (const auto& r : runs) {
    if (!r.ok || !(r.rate > 0) || !(r.before_ms > 0)) continue;
    wb::compare::HostSpeed h{r.before_ms, r.after_ms};
    if (!(h.change() > band)) steady.push_back(1.0 / r.rate);
    normalised.push_back((1.0 / r.rate) / (0.5 * (r.before_ms + r.after_ms)));
  }
  wb::render::Table s;
  s.title = "A/A spread of " + std::to_string(n) + " runs";
  s.columns = {{"metric", "Metric", ""}, {"band", "Band (95 %)", "%"}, {"maxmin", "Max / min", "x"}, {"runs", "Runs", ""}};
  auto row = [&](const std::string& name, const std::vector<double>& v) {
    const double b = wb::stats::bandOfRepeats(v);
    s.rows.push_back({Cell::str(name), Cell::num(pct(b), b * 100), Cell::num(wb::fmtRatio(maxMin(v)), maxMin(v)),
                      Cell::str(std::to_string(v.size()))});
  };
  row("train time per sample", perSample);
  row("time to target", target_s);
  row("process wall", processS);
  row("train time per sample, host-speed-flagged runs left out", steady);
  row("train time per sample ÷ host kernel ms", normalised);
  std::printf("\n%s", wb::render::renderText(s).c_str());

  // Paired intervals from the first k pairs (A B, B A: runs 2p and 2p+1), and what k pairs can detect.
  std::vector<double> a, b;
  for (int p = 0; 2 * p + 1 < n; ++p) {
    const Run &x = runs[2 * p], &y = runs[2 * p + 1];
    if (!x.ok || !y.ok || !(x.rate > 0) || !(y.rate > 0)) continue;
    const bool aFirst = p % 2 == 0;
    a.push_back(1.0 / (aFirst ? x.rate : y.rate));
    b.push_back(1.0 / (aFirst ? y.rate : x.rate));
  }
  wb::render::Table w;
  w.title = "Paired A/A interval (train samples/s) and the smallest effect it can call faster (band " + pct(band) + ")";
  w.columns = {{"pairs", "Pairs", ""}, {"estimate", "A/A estimate", ""}, {"width", "Interval hi/lo", "x"},
               {"detect", "Smallest detectable", "x"}};
  for (int k : {1, 2, 3, 5}) {
    if (k > static_cast<int>(a.size())) break;
    wb::stats::VerdictRule rule;
    rule.floor_band = band;
    const auto e = wb::stats::pairedSpeedup({a.begin(), a.begin() + k}, {b.begin(), b.begin() + k}, rule);
    const double width = e.hasInterval() ? e.hi / e.lo : NAN;
    const double detect = wb::stats::smallestDetectable(k, band);
    w.rows.push_back({Cell::str(std::to_string(k)), Cell::str(wb::stats::formatEstimate(e)),
                      std::isfinite(width) ? Cell::num(wb::fmtRatio(width), width) : Cell::str("no interval"),
                      std::isfinite(detect) ? Cell::num(wb::fmtSpeedup(detect), detect) : Cell::str("–")});
  }
  w.notes.push_back("Smallest detectable: max(1 + the practical threshold, e^(t·√2σ/√n)) with σ from the band, one look "
                    "at 5 %; 1 pair has no interval. bench_verdicts measures the whole adaptive procedure instead.");
  std::printf("\n%s", wb::render::renderText(w).c_str());
  if (!traceFile.empty()) writeTrace(traceFile, runs, sets);
  if (keep.empty()) fs::remove_all(root);
  return 0;
}
