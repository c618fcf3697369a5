// Benchmark (not a test): each in-process speedup against its baseline, in one run, on real data.
// Every configuration is a real `workbench-cli run` (launcher + worker process), so each gets a
// fresh process and its own peak memory; the numbers come from the run's events.
//
//   bench_speedups [--quick] [--repeats R] [--keep DIR] [--only mnist-cnn|resnet18]
//
// Workloads: mnist-cnn on Fashion-MNIST (28 px), and resnet18 on an ImageFolder of Fashion-MNIST
// at 64 px PNG made with `workbench-cli dataset export` (a decode-heavy pipeline).
// Toggles, each against the workload's baseline (workers 0, fp32, grad-enabled eval, no early
// stopping): loader workers, pin memory, bf16 autocast, inference-mode eval (at the eval batch and
// at the training batch, which separates InferenceMode from the larger batch), early stopping.
// Prints one table; the × columns are what to read (the machine is shared and noisy).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench_runs.h"

namespace fs = std::filesystem;
using nlohmann::json;
using wb::render::Cell;
using namespace wbbench;

namespace {

struct Toggle {
  std::string label;
  std::vector<std::string> sets;   // --set assignments on top of the workload's baseline
  bool eval_only = false;          // compare evaluation time/memory rather than training
  std::string unavailable;         // non-empty: not run here, with the reason
};

struct Workload {
  std::string name;
  std::vector<std::string> base;   // the baseline's assignments
  std::vector<Toggle> toggles;
};

std::string g_cli = WB_CLI_PATH;
fs::path g_root;

int runCommand(const std::string& cmd) {
  std::fflush(stdout);
  return std::system(cmd.c_str());
}


}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  bool quick = false;
  int repeats = 1;
  std::string only;
  std::string keep;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--keep" && i + 1 < argc) keep = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench_speedups [--quick] [--repeats R] [--keep DIR] [--only mnist-cnn|resnet18]\n");
      return 2;
    }
  }
  if (const char* cli = std::getenv("WB_CLI")) g_cli = cli;
  g_root = keep.empty() ? fs::temp_directory_path() / ("wb-bench-speedups-" + std::to_string(::getpid())) : fs::path(keep);
  fs::create_directories(g_root);

  // Capabilities decide what is unavailable here (pin memory and fp16 need CUDA).
  bool cuda = false;
  {
    std::string capFile = (g_root / "caps.json").string();
    if (runCommand("'" + g_cli + "' capabilities --json > '" + capFile + "'") == 0) {
      std::FILE* f = std::fopen(capFile.c_str(), "r");
      if (f) {
        std::string text;
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
        std::fclose(f);
        auto caps = json::parse(text, nullptr, false);
        if (caps.is_object()) cuda = caps.value("cuda", false);
      }
    }
  }
  const std::string noCuda = cuda ? "" : "needs CUDA; not available on this machine";

  // The ImageFolder for resnet18: Fashion-MNIST exported as 64 px PNG (train and test splits).
  const int64_t folderTrain = quick ? 256 : 640;
  const int64_t folderVal = quick ? 250 : 500;
  const fs::path folder = g_root / "fmnist-png64";
  if (only.empty() || only == "resnet18") {
    if (!fs::exists(folder / "train")) {
      std::printf("exporting Fashion-MNIST to %s (64 px PNG) ...\n", folder.c_str());
      const int rc = runCommand("'" + g_cli + "' dataset export --split both --to 'folder:" + folder.string() +
                                "' --format png --size 64 --limit " + std::to_string(std::max(folderTrain, folderVal)) +
                                " > /dev/null");
      if (rc != 0) {
        std::fprintf(stderr, "dataset export failed (exit %d)\n", rc);
        return 1;
      }
    }
  }

  const std::string cnnTrain = quick ? "1280" : "4000";
  std::vector<Workload> workloads;
  workloads.push_back({"mnist-cnn / Fashion-MNIST 28 px",
                       {"model.name=mnist-cnn", "data.limit_train=" + cnnTrain, "data.limit_val=1000",
                        "train.epochs=1", "train.batch_size=64", "train.log_every=20", "optim.name=adam",
                        "optim.lr=0.001", "speedups.workers=0", "speedups.inference_eval=false"},
                       {{"workers 2", {"speedups.workers=2"}},
                        {"pin memory", {"speedups.pin_memory=true"}, false, noCuda},
                        {"bf16-mixed", {"speedups.precision=bf16-mixed"}},
                        {"inference eval (batch 1000)", {"speedups.inference_eval=true"}, true},
                        {"inference eval (batch 64)", {"speedups.inference_eval=true", "train.eval_batch_size=64"}, true}}});
  workloads.push_back({"resnet18 / ImageFolder 64 px PNG",
                       {"model.name=resnet18", "data.dataset=folder:" + folder.string(),
                        "data.limit_train=" + std::to_string(folderTrain), "data.limit_val=" + std::to_string(folderVal),
                        "data.image_size=64", "train.epochs=1", "train.batch_size=64", "train.log_every=4",
                        "train.eval_batch_size=250", "optim.name=adam", "optim.lr=0.001", "speedups.workers=0",
                        "speedups.inference_eval=false"},
                       {{"workers 2", {"speedups.workers=2"}},
                        {"bf16-mixed", {"speedups.precision=bf16-mixed"}},
                        {"inference eval (batch 250)", {"speedups.inference_eval=true"}, true},
                        {"inference eval (batch 64)", {"speedups.inference_eval=true", "train.eval_batch_size=64"}, true}}});
  // Early stopping pays off in epochs not run: a small training set overfits after a few epochs.
  workloads.push_back({"mnist-cnn, 6 epochs on 1000 samples",
                       {"model.name=mnist-cnn", "data.limit_train=1000", "data.limit_val=1000", "train.epochs=6",
                        "train.batch_size=64", "train.log_every=10", "optim.name=adam", "optim.lr=0.002",
                        "speedups.workers=0", "speedups.inference_eval=true"},
                       {{"early stopping (patience 1)", {"speedups.early_stopping.patience=1"}}}});

  wb::render::Table t;
  t.title = "Speedups inside one process, each against its baseline (median of " + std::to_string(repeats) + ")";
  t.columns = {{"workload", "Workload", ""},      {"toggle", "Toggle", ""},
               {"sps", "Train samples/s", "1/s"}, {"sps_x", "×", "x"},
               {"epoch_s", "Train s/epoch", "s"}, {"wall_s", "Wall", "s"},
               {"wall_x", "Wall ×", "x"},         {"epochs", "Epochs", ""},
               {"peak", "Train peak", "bytes"},   {"eval_ms", "Eval ms", "ms"},
               {"eval_x", "Eval ×", "x"},         {"eval_peak", "Eval peak", "bytes"},
               {"acc", "Best val acc", ""},       {"split", "ms/step data/h2d/fwd/bwd/opt", ""}};
  t.notes.push_back("× = baseline / toggle time (or toggle / baseline samples/s); > 1 is faster.");
  t.notes.push_back("Peaks are the process RSS on CPU (the trainer resets it at each epoch and evaluation), "
                    "device memory on CUDA.");
  t.notes.push_back("Baseline: workers 0, fp32, evaluation with autograd on at the training batch, no early stopping.");

  int index = 0;
  for (const auto& w : workloads) {
    if (!only.empty() && w.name.rfind(only, 0) != 0) continue;
    std::vector<Measured> baseRuns;
    std::map<size_t, std::vector<Measured>> toggleRuns;
    for (int r = 0; r < repeats; ++r) {
      const std::string tag = "w" + std::to_string(index) + "-r" + std::to_string(r);
      std::printf("[%s] baseline (repeat %d) ...\n", w.name.c_str(), r + 1);
      baseRuns.push_back(runOnce(g_root, g_cli, tag + "-base", w.base));
      for (size_t k = 0; k < w.toggles.size(); ++k) {
        const auto& tg = w.toggles[k];
        if (!tg.unavailable.empty()) continue;
        std::printf("[%s] %s (repeat %d) ...\n", w.name.c_str(), tg.label.c_str(), r + 1);
        std::vector<std::string> sets = w.base;
        sets.insert(sets.end(), tg.sets.begin(), tg.sets.end());
        toggleRuns[k].push_back(runOnce(g_root, g_cli, tag + "-t" + std::to_string(k), sets));
      }
    }
    const Measured base = medianOf(baseRuns);
    auto row = [&](const std::string& label, const Measured& m, bool isBase, bool evalOnly) {
      std::vector<Cell> cells;
      cells.push_back(Cell::str(w.name));
      cells.push_back(Cell::str(label));
      if (!m.ok) {
        cells.push_back(Cell::str("failed: " + m.error.substr(0, 60)));
        while (cells.size() < t.columns.size()) cells.push_back(Cell::str("-"));
        t.rows.push_back(cells);
        return;
      }
      cells.push_back(Cell::num(wb::fmtRate(m.train_sps), m.train_sps));
      cells.push_back(isBase || evalOnly ? Cell::str(isBase ? "1.00×" : "-") : ratioCell(base.train_sps, m.train_sps, true));
      cells.push_back(Cell::num(wb::fmtSeconds(m.epoch_s), m.epoch_s));
      cells.push_back(Cell::num(wb::fmtSeconds(m.wall_s), m.wall_s));
      cells.push_back(isBase ? Cell::str("1.00×") : ratioCell(base.wall_s, m.wall_s, false));
      cells.push_back(Cell::num(std::to_string(m.epochs), m.epochs));
      cells.push_back(Cell::num(wb::fmtBytes(m.train_peak), m.train_peak));
      cells.push_back(Cell::num(wb::fmtFixed(m.eval_ms, 0), m.eval_ms));
      cells.push_back(isBase ? Cell::str("1.00×") : ratioCell(base.eval_ms, m.eval_ms, false));
      cells.push_back(Cell::num(wb::fmtBytes(m.eval_peak), m.eval_peak));
      cells.push_back(Cell::num(wb::fmtAccuracy(m.best_acc), m.best_acc));
      cells.push_back(Cell::str(splitText(m.split)));
      t.rows.push_back(cells);
    };
    row("baseline", base, true, false);
    for (size_t k = 0; k < w.toggles.size(); ++k) {
      const auto& tg = w.toggles[k];
      if (!tg.unavailable.empty()) {
        std::vector<Cell> cells{Cell::str(w.name), Cell::str(tg.label), Cell::str("skipped: " + tg.unavailable)};
        while (cells.size() < t.columns.size()) cells.push_back(Cell::str("-"));
        t.rows.push_back(cells);
        continue;
      }
      row(tg.label, medianOf(toggleRuns[k]), false, tg.eval_only);
    }
    ++index;
  }

  return printAndClean(t, g_root, !keep.empty());
}
