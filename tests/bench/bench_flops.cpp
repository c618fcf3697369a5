// bench_flops: how far from the limit the built-in nets train here. Measures this machine's peak
// (`workbench-cli probe peak`, into a scratch probes folder so the user's store is untouched),
// then one short `workbench-cli run` per net, and prints per net: training FLOPs per step, the
// real step and the compute-only step (the same step on a batch already in memory), achieved
// GFLOP/s and % of the measured peak for both. Not a test: it prints tables, never asserts.
//
//   bench_flops [--steps N] [--quick]      (N: steps per run, default 200 for lenet, scaled down
//                                           for the larger nets; --quick: fewer, smaller data)
// FLOPs: 1 multiply-add = 2 FLOPs; a training step = 3 x forward (wb/model/flop_counter.h).
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/sysinfo.h"
#include "wb/proto/events.h"
#include "wb/proto/flops_record.h"
#include "wb/proto/rundir.h"
#include "wb/records/peak_store.h"
#include "wb/render/table.h"

namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using wb::render::Cell;

const std::string kCli = WB_CLI_PATH;

std::string quote(const std::string& s) { return "'" + s + "'"; }

// Runs a shell command line with the scratch probes folder; its exit code.
int sh(const fs::path& probes, const std::string& cmd) {
  const std::string line = "WB_PROBES_DIR=" + quote(probes.string()) + " nice " + cmd;
  const int rc = std::system(line.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

struct Net {
  std::string label, model, data;
  int steps = 0;
  std::vector<std::string> sets;
};

Cell num(double v, int decimals, const std::string& unit = "") {
  if (!std::isfinite(v)) return Cell::str("–");
  return Cell::num(wb::fmtFixed(v, decimals) + unit, v);
}

std::vector<Cell> rowOf(const Net& n, const json& summary) {
  const auto f = wb::proto::readFlops(summary);
  if (!f || !(f->per_step > 0)) return {Cell::str(n.label), Cell::str("no flops in summary.json")};
  const double peak = f->peak ? f->peak->gflop_per_s : NAN;
  const double co = f->compute_only_step_ms.value_or(NAN), step = f->step_ms.value_or(NAN);
  const double coRate = f->per_step / (co / 1000.0) / 1e9;
  return {Cell::str(n.label),
          num(f->per_step / 1e9, 4),
          num(step, 2),
          num(co, 2),
          num(f->achieved_gflop_per_s, 2),
          f->pctOfPeak() ? num(*f->pctOfPeak(), 2, " %") : Cell::str("no peak"),
          num(coRate, 2),
          std::isfinite(peak) ? num(100.0 * coRate / peak, 2, " %") : Cell::str("–"),
          f->dataPathShare() ? num(100.0 * *f->dataPathShare(), 1, " %") : Cell::str("–")};
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 200;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc) steps = std::max(10, std::atoi(argv[++i]));
    else if (a == "--quick") quick = true, steps = 60;
  }
  const fs::path scratch = fs::temp_directory_path() / ("wb-bench-flops-" + std::to_string(::getpid()));
  const fs::path probes = scratch / "probes";
  fs::create_directories(probes);
  std::printf("bench_flops: %d core(s), %s\n\n", wb::logicalCores(), wb::cpuModel().c_str());
  if (sh(probes, quote(kCli) + " probe peak") != 0) {
    std::printf("FAILED: workbench-cli probe peak\n");
    return 1;
  }
  const fs::path png = scratch / "fmnist-png";
  const bool havePng = sh(probes, quote(kCli) + " dataset export --split both --to folder:" + quote(png.string()) +
                                      " --format png --size 32 --limit " + (quick ? "1000" : "3000") + " > /dev/null") == 0;
  std::vector<Net> nets = {
      {"lenet, Fashion-MNIST, batch 64", "lenet", "fashion-mnist", steps, {}},
      {"mnist-cnn, Fashion-MNIST, batch 64", "mnist-cnn", "fashion-mnist", std::max(10, steps / 4), {}},
  };
  if (havePng)
    nets.push_back({"resnet18, PNG folder 32 px, batch 64, workers 2", "resnet18", "folder:" + png.string(),
                    std::max(10, steps / 10), {"speedups.workers=2"}});
  wb::render::Table t;
  t.title = "FLOPs and the limit (1 multiply-add = 2 FLOPs; training step = 3 x forward)";
  t.columns = {{"net", "Net", ""},
               {"gflop_step", "GFLOP/step", "GFLOP"},
               {"step_ms", "Step ms", "ms"},
               {"compute_ms", "Compute-only ms", "ms"},
               {"gflops", "GFLOP/s", "GFLOP/s"},
               {"pct", "% of peak", "%"},
               {"compute_gflops", "Compute-only GFLOP/s", "GFLOP/s"},
               {"compute_pct", "Compute-only % of peak", "%"},
               {"data_path", "Data path", "%"}};
  std::string peakWhat;
  for (const auto& n : nets) {
    const fs::path dir = scratch / ("run-" + n.model);
    std::string cmd = quote(kCli) + " run --run-dir " + quote(dir.string()) + " --set model.name=" + n.model +
                      " --set data.dataset=" + quote(n.data) + " --set train.max_steps=" + std::to_string(n.steps) +
                      " --set data.limit_val=512";
    for (const auto& s : n.sets) cmd += " --set " + s;
    cmd += " > /dev/null";
    std::fprintf(stderr, "bench_flops: %s, %d steps\n", n.label.c_str(), n.steps);
    if (sh(probes, cmd) != 0) {
      t.rows.push_back({Cell::str(n.label), Cell::str("run FAILED")});
      continue;
    }
    auto summary = wb::proto::readJsonFile(dir / "summary.json");
    if (!summary.ok()) {
      t.rows.push_back({Cell::str(n.label), Cell::str("no summary.json")});
      continue;
    }
    auto row = rowOf(n, *summary);
    while (row.size() < t.columns.size()) row.push_back(Cell::str(""));
    t.rows.push_back(row);
    if (auto f = wb::proto::readFlops(*summary); f && f->peak) peakWhat = f->peak->what + " = " + wb::fmtFixed(f->peak->gflop_per_s, 1) + " GFLOP/s";
    if (auto f = wb::proto::readFlops(*summary); f && f->datasheet) t.notes.push_back("datasheet: " + f->datasheet->what);
  }
  if (!peakWhat.empty()) t.notes.push_back("% of peak: against " + peakWhat);
  t.notes.push_back("Step ms: the real step (loading, copying, forward, backward, optimiser), mean over the run; "
                    "compute-only: the same step on a batch already in memory (median of 3 after training).");
  if (!havePng) t.notes.push_back("resnet18 SKIPPED: `workbench-cli dataset export` failed");
  std::printf("%s", wb::render::renderText(t).c_str());
  fs::remove_all(scratch);
  return 0;
}
