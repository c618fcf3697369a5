// plain_train: the reference the end-to-end benchmark (bench_e2e) holds `workbench-cli run`
// against. Written the way LibTorch's own examples/cpp/mnist is: a torch::data dataset, the
// Normalize and Stack transforms, the example's sequential sampler, one loop of zero_grad /
// forward / cross_entropy / backward / step, then a test pass under InferenceMode. No workbench
// code except the net definitions (wb::model), so both sides train the same net.
//
//   plain_train --data idx:<dir>|folder:<dir> --model lenet --batch 64 --eval-batch 64 --epochs 1
//               --threads 2 --lr 0.01 --momentum 0.5 [--image-size 32]
//               [--sampler sequential|random]   sequential: the example's (default); random: the
//                                               shuffling variant (torch::data's RandomSampler)
//               [--malloc default|keep]         keep: freed memory stays in the process (the
//                                               workbench's mallopt: no mmap'd blocks, no trimming)
//
// Prints one JSON line: steady step ms (median of the steps after the first 10), training
// samples/s (steps only), evaluation seconds, seconds from process start to the end of the first
// step, validation accuracy.
#include <malloc.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <torch/torch.h>

#include "wb/model/model.h"

namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Seconds this process has existed (from /proc/self/stat's start time against the boot clock).
double processAgeSeconds() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::vector<std::string> fields;
  std::string field;
  for (char ch : stat.substr(close + 2)) {
    if (ch == ' ') fields.push_back(field), field.clear();
    else field += ch;
  }
  if (fields.size() < 20) return 0;
  const double startTicks = std::stod(fields[19]);  // field 22 of the whole line
  timespec now{};
  ::clock_gettime(CLOCK_BOOTTIME, &now);
  return static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9 - startTicks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// An ImageFolder (<root>/<class>/<image>) decoded with OpenCV, as a plain program would.
class ImageFolder : public torch::data::datasets::Dataset<ImageFolder> {
 public:
  ImageFolder(const fs::path& root, int size) : size_(size) {
    std::vector<fs::path> classes;
    for (const auto& e : fs::directory_iterator(root))
      if (e.is_directory()) classes.push_back(e.path());
    std::sort(classes.begin(), classes.end());
    for (size_t c = 0; c < classes.size(); ++c) {
      std::vector<fs::path> files;
      for (const auto& f : fs::directory_iterator(classes[c]))
        if (f.is_regular_file()) files.push_back(f.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) items_.emplace_back(f.string(), static_cast<int64_t>(c));
    }
    classes_ = static_cast<int>(classes.size());
    if (!items_.empty()) channels_ = cv::imread(items_.front().first, cv::IMREAD_UNCHANGED).channels() == 1 ? 1 : 3;
  }
  torch::data::Example<> get(size_t index) override {
    cv::Mat img = cv::imread(items_[index].first, channels_ == 1 ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
    if (img.empty()) throw std::runtime_error("cannot decode " + items_[index].first);
    if (channels_ == 3) cv::cvtColor(img, img, cv::COLOR_BGR2RGB);
    if (img.rows != size_ || img.cols != size_) cv::resize(img, img, cv::Size(size_, size_), 0, 0, cv::INTER_AREA);
    auto t = torch::from_blob(img.data, {img.rows, img.cols, channels_}, torch::kUInt8).permute({2, 0, 1}).to(torch::kFloat).div_(255);
    return {t, torch::tensor(items_[index].second, torch::kLong)};
  }
  int channels() const { return channels_; }
  torch::optional<size_t> size() const override { return items_.size(); }
  int classes() const { return classes_; }

 private:
  int size_;
  int classes_ = 0;
  int channels_ = 3;
  std::vector<std::pair<std::string, int64_t>> items_;
};

struct Options {
  std::string data, model = "lenet", sampler = "sequential", malloc_mode = "default";
  int batch = 64, eval_batch = 64, epochs = 1, threads = 0, image_size = 0;
  double lr = 0.01, momentum = 0.5;
};

Options parse(int argc, char** argv) {
  Options o;
  std::map<std::string, std::string> kv;
  for (int i = 1; i + 1 < argc; i += 2) kv[argv[i]] = argv[i + 1];
  auto get = [&](const char* k, const std::string& d) { return kv.count(k) ? kv[k] : d; };
  o.data = get("--data", "");
  o.model = get("--model", o.model);
  o.batch = std::stoi(get("--batch", "64"));
  o.eval_batch = std::stoi(get("--eval-batch", "64"));
  o.epochs = std::stoi(get("--epochs", "1"));
  o.threads = std::stoi(get("--threads", "0"));
  o.image_size = std::stoi(get("--image-size", "0"));
  o.lr = std::stod(get("--lr", "0.01"));
  o.momentum = std::stod(get("--momentum", "0.5"));
  o.sampler = get("--sampler", o.sampler);
  o.malloc_mode = get("--malloc", o.malloc_mode);
  return o;
}

struct Timing {
  std::vector<double> step_ms;
  double train_s = 0, eval_s = 0, first_step_age = 0, val_acc = 0;
  int64_t samples = 0;
};

template <typename Loader>
void trainEpoch(wb::model::Model& net, Loader& loader, torch::optim::Optimizer& opt, Timing& t) {
  net.train(true);
  auto before = Clock::now();
  for (auto& batch : *loader) {
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(net.forward(batch.data), batch.target);
    loss.backward();
    opt.step();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - before).count();
    if (t.step_ms.empty()) t.first_step_age = processAgeSeconds();
    t.step_ms.push_back(ms);
    t.train_s += ms / 1000.0;
    t.samples += batch.data.size(0);
    before = Clock::now();
  }
}

template <typename Loader>
void test(wb::model::Model& net, Loader& loader, Timing& t) {
  const auto t0 = Clock::now();
  torch::InferenceMode guard;
  net.train(false);
  int64_t correct = 0, count = 0;
  for (const auto& batch : *loader) {
    correct += net.forward(batch.data).argmax(1).eq(batch.target).sum().template item<int64_t>();
    count += batch.data.size(0);
  }
  t.eval_s += secondsSince(t0);
  t.val_acc = count > 0 ? static_cast<double>(correct) / static_cast<double>(count) : 0.0;
}

template <typename Sampler, typename TrainSet, typename ValSet>
Timing trainAndTestWith(const Options& o, TrainSet train, ValSet val, int channels, int classes, int side) {
  auto created = wb::model::createModel({o.model, channels, classes, side});
  if (!created.ok()) throw std::runtime_error(created.error().message);
  auto& net = *created.value();
  torch::optim::SGD opt(net.parameters(), torch::optim::SGDOptions(o.lr).momentum(o.momentum));
  auto trainLoader = torch::data::make_data_loader<Sampler>(std::move(train),
                                                            torch::data::DataLoaderOptions(static_cast<size_t>(o.batch)));
  auto valLoader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(val), torch::data::DataLoaderOptions(static_cast<size_t>(o.eval_batch)));
  Timing t;
  for (int e = 0; e < o.epochs; ++e) {
    trainEpoch(net, trainLoader, opt, t);
    test(net, valLoader, t);
  }
  return t;
}

template <typename TrainSet, typename ValSet>
Timing trainAndTest(const Options& o, TrainSet train, ValSet val, int channels, int classes, int side) {
  if (o.sampler == "random")
    return trainAndTestWith<torch::data::samplers::RandomSampler>(o, std::move(train), std::move(val), channels, classes, side);
  return trainAndTestWith<torch::data::samplers::SequentialSampler>(o, std::move(train), std::move(val), channels, classes,
                                                                    side);
}

Timing runIdx(const Options& o) {
  const std::string dir = o.data.substr(4);
  auto norm = torch::data::transforms::Normalize<>(0.2860, 0.3530);  // Fashion-MNIST's mean and std
  auto trainSet = torch::data::datasets::MNIST(dir, torch::data::datasets::MNIST::Mode::kTrain)
                      .map(norm)
                      .map(torch::data::transforms::Stack<>());
  auto valSet = torch::data::datasets::MNIST(dir, torch::data::datasets::MNIST::Mode::kTest)
                    .map(norm)
                    .map(torch::data::transforms::Stack<>());
  return trainAndTest(o, std::move(trainSet), std::move(valSet), 1, 10, 28);
}

Timing runFolder(const Options& o) {
  const fs::path root = o.data.substr(7);
  const int side = o.image_size > 0 ? o.image_size : 32;
  ImageFolder trainFolder(root / "train", side);
  ImageFolder valFolder(fs::is_directory(root / "test") ? root / "test" : root / "val", side);
  const int classes = trainFolder.classes(), channels = trainFolder.channels();
  auto norm = channels == 1 ? torch::data::transforms::Normalize<>(0.5, 0.5)
                            : torch::data::transforms::Normalize<>({0.485, 0.456, 0.406}, {0.229, 0.224, 0.225});
  return trainAndTest(o, std::move(trainFolder).map(norm).map(torch::data::transforms::Stack<>()),
                      std::move(valFolder).map(norm).map(torch::data::transforms::Stack<>()), channels, classes, side);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.sampler != "sequential" && o.sampler != "random") {
    std::fprintf(stderr, "plain_train: --sampler %s: sequential | random\n", o.sampler.c_str());
    return 2;
  }
  if (o.malloc_mode == "keep")
    ::mallopt(M_MMAP_MAX, 0), ::mallopt(M_TRIM_THRESHOLD, INT_MAX), ::mallopt(M_TOP_PAD, 16 << 20);
  else if (o.malloc_mode != "default") {
    std::fprintf(stderr, "plain_train: --malloc %s: default | keep\n", o.malloc_mode.c_str());
    return 2;
  }
  if (o.threads > 0) at::set_num_threads(o.threads);
  torch::manual_seed(1);
  Timing t;
  try {
    if (o.data.rfind("idx:", 0) == 0) t = runIdx(o);
    else if (o.data.rfind("folder:", 0) == 0) t = runFolder(o);
    else {
      std::fprintf(stderr, "plain_train: --data idx:<dir> | folder:<dir>\n");
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plain_train: %s\n", e.what());
    return 1;
  }
  std::vector<double> steady(t.step_ms.begin() + std::min<size_t>(10, t.step_ms.size()), t.step_ms.end());
  std::sort(steady.begin(), steady.end());
  const double median = steady.empty() ? 0.0 : steady[steady.size() / 2];
  std::printf("{\"steady_step_ms\": %.4f, \"train_samples_per_s\": %.2f, \"train_s\": %.4f, \"eval_s\": %.4f, "
              "\"time_to_first_step_s\": %.4f, \"val_acc\": %.5f, \"samples\": %lld, \"sampler\": \"%s\", "
              "\"malloc\": \"%s\"}\n",
              median, t.train_s > 0 ? t.samples / t.train_s : 0.0, t.train_s, t.eval_s, t.first_step_age, t.val_acc,
              static_cast<long long>(t.samples), o.sampler.c_str(), o.malloc_mode.c_str());
  return 0;
}
