// Benchmark (not a test): throughput of the workbench core against (a) the compute-only ceiling
// (the same model on batches preloaded in memory) and (b) a plain LibTorch loop written the
// textbook way (torch::data MNIST dataset + Normalize + Stack + make_data_loader with 2 workers,
// as in LibTorch's MNIST example), on the same Fashion-MNIST samples, batch 64, in one run.
//
//   bench_core [--samples N] [--models lenet,mnist-cnn] [--repeats R]
//
// Prints a table; ratios are what to read (the machine is shared and noisy).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "wb/common/clock.h"
#include "wb/common/paths.h"
#include "wb/data/dataset.h"
#include "wb/model/model.h"
#include "wb/proto/events.h"
#include "wb/train/optim.h"
#include "wb/train/trainer.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kBatch = 64;

wb::Config baseConfig(const std::string& model, int64_t samples) {
  wb::Config c;
  c.name = "bench";
  c.model.name = model;
  c.data.limit_train = samples;
  c.data.limit_val = 1000;
  c.train.batch_size = kBatch;
  c.train.log_every = 1000000;  // one step event at the end of the epoch
  c.train.threads = 0;
  return c;
}

// The workbench core: the real Trainer, in process; train-only samples/s from the epoch event.
double coreThroughput(const std::string& model, int64_t samples, int workers) {
  wb::Config c = baseConfig(model, samples);
  c.speedups.workers = workers;
  wb::proto::EventSink sink;
  double sps = 0;
  sink.setObserver([&](const json& ev) {
    if (ev.value("type", "") == "epoch") sps = ev.value("samples_per_s", 0.0);
  });
  wb::train::TrainerOptions o;
  o.config = c;
  wb::train::Trainer t(o, sink);
  auto r = t.run();
  if (!r.ok()) {
    std::fprintf(stderr, "core run failed: %s\n", r.error().message.c_str());
    std::exit(1);
  }
  return sps;
}

struct Net {
  std::unique_ptr<wb::model::Model> model;
  std::unique_ptr<torch::optim::Optimizer> opt;
};

Net makeNet(const std::string& name) {
  torch::manual_seed(1);
  Net n;
  auto m = wb::model::createModel({name, 1, 10, 28});
  if (!m.ok()) {
    std::fprintf(stderr, "%s\n", m.error().message.c_str());
    std::exit(1);
  }
  n.model = std::move(m.value());
  n.model->train(true);
  auto opt = wb::train::makeOptimizer(wb::OptimConfig{}, n.model->parameters());
  n.opt = std::move(opt.value());
  return n;
}

void trainStep(Net& n, const torch::Tensor& x, const torch::Tensor& y) {
  n.opt->zero_grad();
  auto loss = torch::nll_loss(torch::log_softmax(n.model->forward(x), 1), y);
  loss.backward();
  n.opt->step();
}

// (a) compute-only ceiling: every batch already normalised, in memory.
double ceilingThroughput(const std::string& model, int64_t samples) {
  auto ds = wb::data::openDataset("fashion-mnist", "train");
  if (!ds.ok()) {
    std::fprintf(stderr, "%s\n", ds.error().message.c_str());
    std::exit(1);
  }
  auto idx = torch::arange(samples, torch::kLong);
  auto images = (*ds)->gatherImages(idx).to(torch::kFloat).div_(255).sub_(0.2860).div_(0.3530);
  auto labels = (*ds)->gatherLabels(idx);
  std::vector<std::pair<torch::Tensor, torch::Tensor>> batches;
  for (int64_t s = 0; s < samples; s += kBatch) {
    int64_t e = std::min(samples, s + kBatch);
    batches.emplace_back(images.slice(0, s, e).contiguous(), labels.slice(0, s, e).contiguous());
  }
  Net n = makeNet(model);
  wb::Stopwatch sw;
  for (auto& [x, y] : batches) trainStep(n, x, y);
  return static_cast<double>(samples) / sw.seconds();
}

// (b) the textbook LibTorch loop (examples/cpp/mnist): torch::data::datasets::MNIST on the raw
// IDX files (it does not read .gz, so they are unpacked once into a temp folder first).
double textbookThroughput(const std::string& model, int64_t samples, const fs::path& rawDir) {
  auto dataset = torch::data::datasets::MNIST(rawDir.string())
                     .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
                     .map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader(
      std::move(dataset), torch::data::DataLoaderOptions().batch_size(kBatch).workers(2));
  Net n = makeNet(model);
  wb::Stopwatch sw;
  int64_t seen = 0;
  for (auto& batch : *loader) {
    trainStep(n, batch.data, batch.target);
    seen += batch.data.size(0);
    if (seen >= samples) break;
  }
  return static_cast<double>(seen) / sw.seconds();
}

fs::path unpackRawMnist() {
  fs::path dir = fs::temp_directory_path() / "wb-bench-fmnist-raw";
  fs::create_directories(dir);
  const fs::path src = wb::defaultFashionMnistDir();
  for (const char* f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                        "t10k-labels-idx1-ubyte"}) {
    if (fs::exists(dir / f)) continue;
    std::string cmd = "gzip -dc '" + (src / (std::string(f) + ".gz")).string() + "' > '" + (dir / f).string() + "'";
    if (std::system(cmd.c_str()) != 0) {
      std::fprintf(stderr, "cannot unpack %s\n", f);
      std::exit(1);
    }
  }
  return dir;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int64_t samples = 9600;
  int repeats = 1;
  std::vector<std::string> models = {"lenet", "mnist-cnn"};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--samples" && i + 1 < argc) samples = std::atoll(argv[++i]);
    else if (a == "--repeats" && i + 1 < argc) repeats = std::atoi(argv[++i]);
    else if (a == "--models" && i + 1 < argc) {
      models.clear();
      std::stringstream ss(argv[++i]);
      for (std::string m; std::getline(ss, m, ',');) models.push_back(m);
    }
  }
  const fs::path raw = unpackRawMnist();
  const wb::Config defaults;  // named: a Config{} temporary trips GCC 12's -Wmaybe-uninitialized
  const int threads = wb::train::defaultThreads(defaults, 1);
  at::set_num_threads(threads);
  std::printf("bench_core: Fashion-MNIST, %lld train samples, batch %d, %d intra-op thread(s), median of %d\n\n",
              static_cast<long long>(samples), kBatch, threads, repeats);
  std::printf("| model     | pipeline                     | samples/s | vs ceiling | vs textbook |\n");
  std::printf("|-----------|------------------------------|----------:|-----------:|------------:|\n");
  for (const auto& m : models) {
    std::map<std::string, std::vector<double>> r;
    for (int rep = 0; rep < repeats; ++rep) {
      // Interleaved so that drift on a shared machine hits every variant alike.
      r["ceiling"].push_back(ceilingThroughput(m, samples));
      r["textbook"].push_back(textbookThroughput(m, samples, raw));
      for (int w : {0, 1, 2}) r["workers " + std::to_string(w)].push_back(coreThroughput(m, samples, w));
      at::set_num_threads(threads);
    }
    const double ceiling = median(r["ceiling"]);
    const double textbook = median(r["textbook"]);
    auto row = [&](const std::string& label, double v) {
      std::printf("| %-9s | %-28s | %9.0f | %9.1f%% | %10.2fx |\n", m.c_str(), label.c_str(), v, 100.0 * v / ceiling,
                  v / textbook);
    };
    row("compute-only ceiling", ceiling);
    row("textbook torch::data loop", textbook);
    for (int w : {0, 1, 2}) row("workbench core, workers " + std::to_string(w), median(r["workers " + std::to_string(w)]));
  }
  return 0;
}
