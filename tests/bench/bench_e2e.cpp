// bench_e2e: what a user runs, as whole processes, against a plain LibTorch program on the same
// work (plain_train, written like LibTorch's MNIST example), in one sitting, interleaved, as
// medians and ratios. Not a test: it prints tables and never asserts a time.
//
//   bench_e2e [--repeats N] [--sections lenet,workers,mnist-cnn,resnet18,devices,eval] [--quick]
//             [--plain-variants]   lenet also against plain_train --malloc keep (both samplers)
//
// The yardstick is plain_train as LibTorch's MNIST example is written (sequential sampler, glibc's
// default malloc); its shuffling variant (RandomSampler) runs beside it. Each table says which
// row its ratios are against; a ratio is taken per interleaved round and shown as the median
// with its min–max.
//
// For each configuration it prints the steady step time (median of rank 0's step events after
// the first; plain: median step after the first 10), training throughput (training steps only),
// evaluation time, time to the end of the first step (from the start of the process the user
// ran), whole-process wall time, and whether the machine was contended while it ran.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/sysinfo.h"
#include "wb/proto/events.h"
#include "wb/render/table.h"

extern char** environ;

namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using wb::render::Cell;

const std::string kCli = WB_CLI_PATH;
const std::string kPlain = WB_PLAIN_PATH;

// ---- processes --------------------------------------------------------------------------------

struct Proc {
  pid_t pid = -1;
  int out_fd = -1;
  std::chrono::steady_clock::time_point t0;
};

Proc spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extraEnv, bool captureOut) {
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);
  for (const auto& kv : extraEnv) envs.push_back(kv);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : envs) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  int pipefd[2] = {-1, -1};
  if (captureOut && ::pipe(pipefd) == 0) {
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  } else {
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  }
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  Proc p;
  p.t0 = std::chrono::steady_clock::now();
  if (posix_spawn(&p.pid, argv[0].c_str(), &fa, nullptr, cargv.data(), cenv.data()) != 0) p.pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  if (pipefd[1] >= 0) ::close(pipefd[1]);
  p.out_fd = pipefd[0];
  return p;
}

struct Finished {
  int code = -1;
  double wall_s = 0;
  double cpu_s = 0;  // the child's CPU seconds, all its threads (wait4)
  std::string out;
};

Finished finish(Proc& p) {
  Finished f;
  if (p.out_fd >= 0) {
    char buf[4096];
    for (ssize_t n; (n = ::read(p.out_fd, buf, sizeof buf)) > 0;) f.out.append(buf, static_cast<size_t>(n));
    ::close(p.out_fd);
  }
  int status = 0;
  rusage ru{};
  if (p.pid > 0 && ::wait4(p.pid, &status, 0, &ru) == p.pid) {
    f.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    f.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
              static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  }
  f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - p.t0).count();
  return f;
}

Finished runProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}, bool capture = false) {
  Proc p = spawn(argv, env, capture);
  return finish(p);
}

// ---- what one run measured --------------------------------------------------------------------

struct Sample {
  bool ok = false;
  double step_ms = NAN, train_sps = NAN, eval_s = NAN, first_step_s = NAN, wall_s = NAN, acc = NAN;
  double eval_peak_mib = NAN;
  bool contended = false;
};

double num(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

double median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// A workbench run folder: rank 0's step events and summary.json.
Sample fromRunDir(const fs::path& dir, const Finished& f) {
  Sample s;
  s.wall_s = f.wall_s;
  std::vector<double> steps;
  for (const auto& ev : wb::proto::readEventsFile((dir / "events.jsonl").string())) {
    const std::string type = ev.value("type", "");
    if (ev.value("rank", 0) != 0) continue;
    if (type == "step") steps.push_back(num(ev, "step_ms"));
    if (type == "eval" && ev.contains("mem")) s.eval_peak_mib = num(ev["mem"], "peak") / 1048576.0;
  }
  if (!steps.empty()) steps.erase(steps.begin());  // the first interval holds the warm-up
  s.step_ms = median(steps);
  std::ifstream in(dir / "summary.json");
  const json sum = json::parse(in, nullptr, false);
  s.ok = f.code == 0 && sum.is_object();
  s.train_sps = num(sum, "train_samples_per_s");
  s.eval_s = num(sum, "eval_s");
  s.first_step_s = num(sum, "time_to_first_step_s");
  s.acc = num(sum, "final_val_acc");
  s.contended = sum.is_object() && sum.value("/cpu/contended"_json_pointer, false);
  return s;
}

Sample fromPlain(const Finished& f, const wb::CpuTimes& before) {
  Sample s;
  s.wall_s = f.wall_s;
  const json j = json::parse(f.out, nullptr, false);
  s.ok = f.code == 0 && j.is_object();
  s.step_ms = num(j, "steady_step_ms");
  s.train_sps = num(j, "train_samples_per_s");
  s.eval_s = num(j, "eval_s");
  s.first_step_s = num(j, "time_to_first_step_s");
  s.acc = num(j, "val_acc");
  // The rule the launcher applies to a workbench run: what else the machine did beside the
  // program (its CPU from wait4) and this bench.
  const wb::CpuShare share = wb::cpuShareBetween(before, wb::readCpuTimes(), f.cpu_s);
  s.contended = wb::isContended(share.other_cores);
  return s;
}

// ---- configurations ---------------------------------------------------------------------------

struct Workload {
  std::string data;                 // workbench dataset spec
  std::string plainData;            // plain_train --data
  std::vector<std::string> sets;    // --set KEY=VALUE for the workbench
  std::vector<std::string> plainArgs;
};

struct Variant {
  std::string name;
  std::function<Sample(const fs::path& runDir)> run;
};

std::vector<std::string> withSets(std::vector<std::string> argv, const std::vector<std::string>& sets) {
  for (const auto& s : sets) argv.push_back("--set"), argv.push_back(s);
  return argv;
}

// The resolved config the launcher would write, for workers started by hand.
fs::path resolvedConfig(const fs::path& scratch, const std::string& tag, const std::vector<std::string>& sets) {
  const Finished f = runProcess(withSets({kCli, "run", "--print-config"}, sets), {}, true);
  const fs::path path = scratch / (tag + ".config.json");
  std::ofstream(path) << f.out;
  return path;
}

// The plain LibTorch program as LibTorch's MNIST example is written (sequential sampler), or with
// `extra` options: --sampler random (its shuffling variant), --malloc keep (the workbench's mallopt).
Variant plain(const Workload& w, const std::string& name = "plain LibTorch (as the MNIST example: sequential)",
              std::vector<std::string> extra = {}) {
  return {name, [w, extra](const fs::path&) {
            std::vector<std::string> argv = {kPlain, "--data", w.plainData, "--threads", std::to_string(wb::logicalCores())};
            argv.insert(argv.end(), w.plainArgs.begin(), w.plainArgs.end());
            argv.insert(argv.end(), extra.begin(), extra.end());
            const wb::CpuTimes before = wb::readCpuTimes();
            return fromPlain(runProcess(argv, {}, true), before);
          }};
}

Variant plainShuffled(const Workload& w) {
  return plain(w, "plain LibTorch, shuffling (RandomSampler)", {"--sampler", "random"});
}

Variant cliRun(const Workload& w, const std::string& name, std::vector<std::string> extra = {}) {
  return {name, [w, extra](const fs::path& dir) {
            std::vector<std::string> sets = w.sets;
            sets.insert(sets.end(), extra.begin(), extra.end());
            return fromRunDir(dir, runProcess(withSets({kCli, "run", "--run-dir", dir.string()}, sets)));
          }};
}

// `workbench-cli worker` processes started by hand with the torchrun variables (one: alone).
Variant workersByHand(const Workload& w, const std::string& name, const fs::path& scratch, std::vector<std::string> extra,
                      int world) {
  std::vector<std::string> sets = w.sets;
  sets.insert(sets.end(), extra.begin(), extra.end());
  const fs::path config = resolvedConfig(scratch, name.substr(0, name.find(' ')) + std::to_string(world) +
                                                      std::to_string(std::hash<std::string>{}(name) % 1000), sets);
  return {name, [config, world](const fs::path& dir) {
            const std::string port = std::to_string(29600 + (::getpid() % 200));
            std::vector<Proc> ranks;
            for (int r = 0; r < world; ++r) {
              std::vector<std::string> env;
              if (world > 1)
                env = {"RANK=" + std::to_string(r), "WORLD_SIZE=" + std::to_string(world), "LOCAL_RANK=" + std::to_string(r),
                       "LOCAL_WORLD_SIZE=" + std::to_string(world), "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + port};
              ranks.push_back(spawn({kCli, "worker", "--config", config.string(), "--run-dir", dir.string()}, env, false));
            }
            Finished last;
            for (auto& p : ranks) {
              Finished f = finish(p);
              if (f.code != 0 || last.code == -1) last.code = f.code;
              last.wall_s = std::max(last.wall_s, f.wall_s);
            }
            return fromRunDir(dir, last);
          }};
}

// ---- tables -----------------------------------------------------------------------------------

Cell cellOf(double v, const char* fmt) {
  if (!std::isfinite(v)) return Cell::str("–");
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return Cell::str(buf);
}

struct Row {
  std::string name;
  std::vector<Sample> samples;
  Sample med() const {
    Sample m;
    auto pick = [&](double Sample::*f) {
      std::vector<double> v;
      for (const auto& s : samples) v.push_back(s.*f);
      return median(v);
    };
    m.step_ms = pick(&Sample::step_ms), m.train_sps = pick(&Sample::train_sps), m.eval_s = pick(&Sample::eval_s);
    m.first_step_s = pick(&Sample::first_step_s), m.wall_s = pick(&Sample::wall_s), m.acc = pick(&Sample::acc);
    m.eval_peak_mib = pick(&Sample::eval_peak_mib);
    for (const auto& s : samples) m.contended = m.contended || s.contended, m.ok = m.ok || s.ok;
    return m;
  }
};

// The ratio run / reference of each round (the two ran side by side), as "median (min–max)".
Cell pairedRatio(const Row& r, const Row& ref, double Sample::*field) {
  std::vector<double> ratios;
  for (size_t i = 0; i < r.samples.size() && i < ref.samples.size(); ++i) {
    const double a = r.samples[i].*field, b = ref.samples[i].*field;
    if (std::isfinite(a) && std::isfinite(b) && b > 0) ratios.push_back(a / b);
  }
  if (ratios.empty()) return Cell::str("–");
  std::sort(ratios.begin(), ratios.end());
  char buf[64];
  if (ratios.size() == 1) std::snprintf(buf, sizeof buf, "%.2f×", ratios[0]);
  else std::snprintf(buf, sizeof buf, "%.2f× (%.2f–%.2f)", median(ratios), ratios.front(), ratios.back());
  return Cell::str(buf);
}

void printRows(const std::string& title, const std::vector<Row>& rows, size_t reference) {
  wb::render::Table t;
  t.columns = {{"config", "Configuration", ""},        {"step", "Steady step ms", "ms"},
               {"sps", "Train samples/s", "1/s"},       {"x_sps", "× train samples/s", "x"},
               {"eval", "Eval s", "s"},                  {"first", "First step s", "s"},
               {"wall", "Whole process s", "s"},         {"x_wall", "× wall", "x"},
               {"acc", "Val acc", "%"},                  {"note", "Note", ""}};
  for (const auto& r : rows) {
    const Sample m = r.med();
    int contended = 0, failed = 0;
    for (const auto& s : r.samples) contended += s.contended, failed += !s.ok;
    std::string note = std::to_string(r.samples.size()) + " runs";
    if (contended) note += ", " + std::to_string(contended) + " contended";
    if (failed) note += ", " + std::to_string(failed) + " FAILED";
    t.rows.push_back({Cell::str(r.name), cellOf(m.step_ms, "%.2f"), cellOf(m.train_sps, "%.0f"),
                      pairedRatio(r, rows[reference], &Sample::train_sps), cellOf(m.eval_s, "%.2f"),
                      cellOf(m.first_step_s, "%.2f"), cellOf(m.wall_s, "%.2f"), pairedRatio(r, rows[reference], &Sample::wall_s),
                      cellOf(100.0 * m.acc, "%.2f"), Cell::str(note)});
  }
  t.notes.push_back("Every ratio is against \"" + rows[reference].name + "\": per round (the two ran in the same "
                    "interleaved round), the median and the min–max over rounds.");
  std::printf("\n## %s\n%s", title.c_str(), wb::render::renderText(t).c_str());
  std::fflush(stdout);
}

// Every variant once per round, rounds interleaved: a noisy minute touches one repeat of each.
std::vector<Row> measure(const fs::path& scratch, const std::vector<Variant>& variants, int repeats) {
  std::vector<Row> rows;
  for (const auto& v : variants) rows.push_back({v.name, {}});
  for (int r = 0; r < repeats; ++r)
    for (size_t i = 0; i < variants.size(); ++i) {
      const fs::path dir = scratch / ("run-" + std::to_string(i) + "-" + std::to_string(r));
      fs::remove_all(dir);
      rows[i].samples.push_back(variants[i].run(dir));
      std::fprintf(stderr, "  %-44s round %d: %s\n", variants[i].name.c_str(), r + 1,
                   rows[i].samples.back().ok ? "ok" : "FAILED");
      fs::remove_all(dir);
    }
  return rows;
}

// ---- the data ---------------------------------------------------------------------------------

// Fashion-MNIST's IDX files uncompressed once (torch::data's MNIST reads raw files only); the
// workbench reads the same files.
std::optional<fs::path> rawFashionMnist(const fs::path& scratch) {
  const fs::path src = "/usr/share/datasets/fashion-mnist", dst = scratch / "fashion-mnist-raw";
  fs::create_directories(dst);
  for (const char* f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    if (fs::exists(dst / f)) continue;
    if (!fs::exists(src / (std::string(f) + ".gz"))) return std::nullopt;
    const std::string cmd = "gzip -dc '" + (src / (std::string(f) + ".gz")).string() + "' > '" + (dst / f).string() + "'";
    if (std::system(cmd.c_str()) != 0) return std::nullopt;
  }
  return dst;
}

std::optional<fs::path> pngFolder(const fs::path& scratch, int limit, int size) {
  const fs::path dir = scratch / ("fmnist-png-" + std::to_string(limit) + "-" + std::to_string(size));
  if (fs::exists(dir / "train") && fs::exists(dir / "test")) return dir;
  const Finished f = runProcess({kCli, "dataset", "export", "--split", "both", "--to", "folder:" + dir.string(), "--format",
                                 "png", "--size", std::to_string(size), "--limit", std::to_string(limit)});
  if (f.code != 0) return std::nullopt;
  return dir;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 3;
  std::string sections = "lenet,workers,mnist-cnn,resnet18,devices,eval";
  bool quick = false, plainVariants = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
    else if (a == "--sections" && i + 1 < argc) sections = argv[++i];
    else if (a == "--quick") quick = true, repeats = 1;
    else if (a == "--plain-variants") plainVariants = true;
  }
  auto want = [&](const char* s) { return ("," + sections + ",").find("," + std::string(s) + ",") != std::string::npos; };
  const fs::path scratch = fs::temp_directory_path() / ("wb-bench-e2e-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  const auto idx = rawFashionMnist(scratch);
  if (!idx) {
    std::printf("SKIPPED: Fashion-MNIST not found in /usr/share/datasets/fashion-mnist (dataset-fashion-mnist)\n");
    return 0;
  }
  std::printf("bench_e2e: %d core(s), %s, %d repeat(s) per configuration, interleaved\n", wb::logicalCores(),
              wb::cpuModel().c_str(), repeats);
  const std::string limit = quick ? "10000" : "0";
  Workload lenet{"idx:" + idx->string(), "idx:" + idx->string(),
                 {"data.dataset=idx:" + idx->string(), "train.eval_batch_size=64"}, {"--eval-batch", "64"}};

  if (want("lenet")) {
    const std::vector<Variant> v = {plain(lenet), plainShuffled(lenet),
                                    cliRun(lenet, "workbench-cli run (all toggles off)"),
                                    workersByHand(lenet, "workbench-cli worker alone (same config)", scratch, {}, 1)};
    std::vector<Variant> all = v;
    if (plainVariants) {
      all.push_back(plain(lenet, "plain LibTorch, sequential, --malloc keep", {"--malloc", "keep"}));
      all.push_back(plain(lenet, "plain LibTorch, shuffling, --malloc keep", {"--sampler", "random", "--malloc", "keep"}));
    }
    printRows("lenet, Fashion-MNIST 60k, batch 64, 1 epoch, eval batch 64", measure(scratch, all, repeats), 0);
  }
  if (want("workers")) {
    // Each toggle through the launcher against the same config's worker started alone.
    std::vector<Variant> v = {plain(lenet)};
    const std::vector<std::pair<std::string, std::vector<std::string>>> toggles = {
        {"workers 2", {"speedups.workers=2"}}, {"inference eval batch 1000", {"train.eval_batch_size=1000"}}};
    for (const auto& [name, sets] : toggles) {
      v.push_back(cliRun(lenet, "run, " + name, sets));
      v.push_back(workersByHand(lenet, "worker alone, " + name, scratch, sets, 1));
    }
    printRows("lenet toggles: the launcher against the worker alone", measure(scratch, v, repeats), 0);
  }
  if (want("mnist-cnn")) {
    Workload cnn = lenet;
    cnn.sets.push_back("model.name=mnist-cnn");
    cnn.plainArgs = {"--model", "mnist-cnn", "--eval-batch", "64"};
    const std::vector<Variant> v = {plain(cnn), plainShuffled(cnn), cliRun(cnn, "workbench-cli run (all toggles off)"),
                                    cliRun(cnn, "workbench-cli run, workers 2", {"speedups.workers=2"})};
    printRows("mnist-cnn, Fashion-MNIST 60k, batch 64, 1 epoch", measure(scratch, v, repeats), 0);
  }
  if (want("resnet18")) {
    const auto png = pngFolder(scratch, quick ? 1000 : 3000, 32);
    if (!png) {
      std::printf("\n## resnet18 on a PNG ImageFolder\nSKIPPED: `workbench-cli dataset export` failed\n");
    } else {
      Workload rn{"folder:" + png->string(), "folder:" + png->string(),
                  {"data.dataset=folder:" + png->string(), "model.name=resnet18", "train.eval_batch_size=64",
                   "data.augment.normalize=true"},
                  {"--model", "resnet18", "--eval-batch", "64", "--image-size", "32"}};
      const std::vector<Variant> v = {plain(rn), plainShuffled(rn), cliRun(rn, "workbench-cli run (all toggles off)"),
                                      cliRun(rn, "workbench-cli run, workers 2", {"speedups.workers=2"}),
                                      workersByHand(rn, "worker alone, workers 2", scratch, {"speedups.workers=2"}, 1)};
      printRows("resnet18, PNG ImageFolder (Fashion-MNIST exported, 32x32), batch 64, 1 epoch", measure(scratch, v, repeats), 0);
    }
  }
  if (want("devices")) {
    const std::vector<std::string> two = {"speedups.devices=2"};
    const std::vector<Variant> v = {
        cliRun(lenet, "run, devices 2 (launcher)", two), workersByHand(lenet, "2 workers by hand (torchrun variables)", scratch, two, 2),
        cliRun(lenet, "run, devices 2, zero1", {"speedups.devices=2", "speedups.sharding=zero1"}),
        workersByHand(lenet, "2 workers by hand, zero1", scratch, {"speedups.devices=2", "speedups.sharding=zero1"}, 2)};
    printRows("lenet on 2 CPU processes: the launcher against workers started by hand", measure(scratch, v, repeats), 1);
  }
  if (want("eval")) {
    // Evaluation alone: 50 training steps, then the 10k test set under InferenceMode.
    std::vector<Variant> v;
    for (const char* b : {"64", "256", "1000"})
      v.push_back(cliRun(lenet, std::string("eval batch ") + b,
                         {"train.max_steps=50", std::string("train.eval_batch_size=") + b, "speedups.inference_eval=true"}));
    const auto rows = measure(scratch, v, repeats);
    wb::render::Table t;
    t.columns = {{"batch", "Eval batch (InferenceMode)", ""}, {"eval", "Eval s (10k)", "s"}, {"peak", "Eval peak RSS MiB", "MiB"}};
    for (const auto& r : rows) {
      const Sample m = r.med();
      t.rows.push_back({Cell::str(r.name), cellOf(m.eval_s, "%.3f"), cellOf(m.eval_peak_mib, "%.0f")});
    }
    std::printf("\n## Evaluation batch (lenet, 10k test images, medians)\n%s", wb::render::renderText(t).c_str());
  }
  fs::remove_all(scratch);
  return 0;
}
