// Benchmark (not a test): more devices and sharding, in one run on this machine. Each row is a
// real `workbench-cli run` (launcher + one worker process per rank over c10d: Gloo on CPU, NCCL
// with CUDA), read back from its run directory.
//
//   bench_dist [--model mnist-cnn] [--samples N] [--repeats R] [--keep DIR]
//
// Rows: devices 1; devices 2 with sharding off / zero1 / zero2. Columns: global samples/s and
// the scaling efficiency (samples/s at N ranks / (N x one rank's)), step time, comm ms per step
// (time the training thread waits for gradient buckets and parameter gathers), the overlapped
// share (of the gradient-communication window, the part that passed during backward),
// optimiser-state bytes per rank, peak memory of rank 0, val acc. train.batch_size is per rank,
// so two ranks train on a twice larger global batch (half the steps per epoch), as DDP does.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "bench_runs.h"

using namespace wbbench;

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string model = "mnist-cnn";
  std::string samples = "4000";
  int repeats = 1;
  std::string keep;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--model" && i + 1 < argc) model = argv[++i];
    else if (a == "--samples" && i + 1 < argc) samples = argv[++i];
    else if (a == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
    else if (a == "--keep" && i + 1 < argc) keep = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench_dist [--model NAME] [--samples N] [--repeats R] [--keep DIR]\n");
      return 2;
    }
  }
  std::string cli = WB_CLI_PATH;
  if (const char* env = std::getenv("WB_CLI")) cli = env;
  const fs::path root =
      keep.empty() ? fs::temp_directory_path() / ("wb-bench-dist-" + std::to_string(::getpid())) : fs::path(keep);
  fs::create_directories(root);

  const std::vector<std::string> base = {"model.name=" + model, "data.limit_train=" + samples,
                                         "data.limit_val=1000", "train.epochs=1", "train.batch_size=64",
                                         "train.log_every=10", "optim.name=adam", "optim.lr=0.001",
                                         "speedups.workers=1"};
  struct Row {
    std::string label;
    std::vector<std::string> sets;
  };
  const std::vector<Row> rows = {
      {"devices 1", {"speedups.devices=1"}},
      {"devices 2, sharding off (DDP)", {"speedups.devices=2", "speedups.sharding=off"}},
      {"devices 2, zero1", {"speedups.devices=2", "speedups.sharding=zero1"}},
      {"devices 2, zero2", {"speedups.devices=2", "speedups.sharding=zero2"}},
  };
  std::map<size_t, std::vector<Measured>> runs;
  for (int r = 0; r < repeats; ++r) {
    for (size_t k = 0; k < rows.size(); ++k) {
      std::printf("%s (repeat %d) ...\n", rows[k].label.c_str(), r + 1);
      std::vector<std::string> sets = base;
      sets.insert(sets.end(), rows[k].sets.begin(), rows[k].sets.end());
      runs[k].push_back(runOnce(root, cli, "d" + std::to_string(k) + "-r" + std::to_string(r), sets));
    }
  }

  wb::render::Table t;
  t.title = "Devices and sharding: " + model + " on Fashion-MNIST (" + samples + " samples, batch 64 per rank, Adam), median of " +
            std::to_string(repeats);
  t.columns = {{"config", "Config", ""},
               {"sps", "Samples/s (global)", "1/s"},
               {"sps_x", "× vs 1", "x"},
               {"eff", "Scaling eff.", "%"},
               {"step_ms", "Step ms", "ms"},
               {"comm_ms", "Comm ms/step", "ms"},
               {"overlap", "Overlapped share", "%"},
               {"opt_bytes", "Optimiser state per rank", "bytes"},
               {"peak", "Peak (rank 0)", "bytes"},
               {"acc", "Val acc", ""}};
  t.notes.push_back("Scaling efficiency = samples/s with N ranks / (N x samples/s with one).");
  t.notes.push_back("Comm ms/step: the training thread waiting for buckets (and ZeRO's parameter all-gather).");
  t.notes.push_back("Optimiser state per rank (rank 0 / rank 1): Adam's exp_avg + exp_avg_sq each rank holds; under "
                    "ZeRO only for its equal range of the parameters laid end to end (tensors split between ranks).");
  const Measured one = medianOf(runs[0]);
  for (size_t k = 0; k < rows.size(); ++k) {
    const Measured m = medianOf(runs[k]);
    std::vector<Cell> cells{Cell::str(rows[k].label)};
    if (!m.ok) {
      cells.push_back(Cell::str("failed: " + m.error.substr(0, 80)));
      while (cells.size() < t.columns.size()) cells.push_back(Cell::str("-"));
      t.rows.push_back(cells);
      continue;
    }
    cells.push_back(Cell::num(wb::fmtRate(m.train_sps), m.train_sps));
    cells.push_back(ratioCell(one.train_sps, m.train_sps, true));
    const double eff = one.train_sps > 0 ? m.train_sps / (m.world * one.train_sps) : 0;
    cells.push_back(Cell::num(wb::fmtFixed(eff * 100, 0) + " %", eff * 100));
    cells.push_back(Cell::num(wb::fmtFixed(m.step_ms, 1), m.step_ms));
    cells.push_back(m.world > 1 ? Cell::num(wb::fmtFixed(m.comm_ms, 1), m.comm_ms) : Cell::str("-"));
    cells.push_back(m.world > 1 ? Cell::num(wb::fmtFixed(m.overlap * 100, 0) + " %", m.overlap * 100)
                                : Cell::str("-"));
    std::string perRank;
    for (double b : m.opt_bytes_by_rank) perRank += (perRank.empty() ? "" : " / ") + wb::fmtBytes(b);
    cells.push_back(m.opt_bytes > 0 ? Cell::num(perRank, m.opt_bytes) : Cell::str("all (one rank)"));
    cells.push_back(Cell::num(wb::fmtBytes(m.train_peak), m.train_peak));
    cells.push_back(Cell::num(wb::fmtAccuracy(m.best_acc), m.best_acc));
    t.rows.push_back(cells);
  }
  return printAndClean(t, root, !keep.empty());
}
