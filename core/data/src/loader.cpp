// The sampler and the threaded loader. Workers build whole batches (batch b is a pure function of
// seed, epoch, rank and b), so order and content never depend on the worker count; the consumer
// reorders by batch number and does all bookkeeping (bad-sample budget, warnings) in order.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "image_ops.h"
#include "internal.h"
#include "wb/common/config_schema.h"
#include "wb/common/format.h"
#include "wb/data/usability.h"

namespace wb::data {

std::vector<int64_t> epochOrder(int64_t dataset_size, uint64_t seed, int epoch, bool shuffle, int rank,
                                int world_size) {
  if (world_size < 1) throw std::invalid_argument("epochOrder: world_size " + std::to_string(world_size) + " must be >= 1");
  if (rank < 0 || rank >= world_size)
    throw std::invalid_argument("epochOrder: rank " + std::to_string(rank) + " outside [0, " +
                                std::to_string(world_size) + ")");
  if (dataset_size <= 0) return {};
  std::vector<int64_t> all;
  if (shuffle) {
    all = detail::permutation(dataset_size, detail::makeRng(detail::Stream::Permutation, seed, static_cast<uint64_t>(epoch)));
  } else {
    all.resize(static_cast<size_t>(dataset_size));
    for (int64_t i = 0; i < dataset_size; ++i) all[i] = i;
  }
  const int64_t per = (dataset_size + world_size - 1) / world_size;
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(per));
  for (int64_t k = 0; k < per; ++k) mine.push_back(all[static_cast<size_t>((k * world_size + rank) % dataset_size)]);
  return mine;
}

TransformOptions transformOptionsFor(const DataConfig& data, const DatasetInfo& info, bool train) {
  TransformOptions t;
  t.augment = train;
  t.crop_padding = data.augment.crop_padding;
  t.hflip = data.augment.hflip;
  t.image_size = data.image_size;
  t.random_resized_crop = train && data.image_size > 0 && info.name.rfind("folder:", 0) == 0;
  t.normalize = data.augment.normalize;
  return t;
}

std::array<int64_t, 3> outputShape(const DatasetInfo& info, const TransformOptions& t) {
  const int64_t c = t.channels > 0 ? t.channels : info.channels;
  if (t.image_size > 0) return {c, t.image_size, t.image_size};
  return {c, info.height, info.width};
}

namespace {

struct BadSample {
  std::string path;
  std::string message;
};

struct Built {
  std::optional<Batch> batch;  // empty when every sample of the batch was bad
  std::vector<BadSample> bad;
  std::exception_ptr error;
};

struct EpochPlan {
  uint64_t generation = 0;
  int epoch = 0;
  std::vector<int64_t> order;
  int64_t batches = 0;
};

}  // namespace

struct Loader::Impl {
  std::shared_ptr<const Dataset> dataset;
  LoaderOptions opt;
  bool pinned = false;
  int outChannels = 1;
  std::vector<float> table;
  int64_t samplesPerEpoch = 0;
  int64_t batchesPerEpoch = 0;
  int64_t wholeEpoch = 0;  // every rank's samples of an epoch: what the share of unreadable ones is of

  std::mutex mu;
  std::condition_variable workCv, readyCv;
  std::shared_ptr<const EpochPlan> plan;  // guarded by mu
  uint64_t generation = 0;
  bool active = false, stopping = false;
  int64_t nextDispatch = 0, nextReturn = 0;
  std::map<int64_t, Built> ready;
  std::vector<std::thread> threads;

  // Consumer-only state.
  int64_t badTotal = 0, badEpoch = 0;
  std::set<std::string> warned;
  std::function<void(const std::string&, const std::string&)> onWarning;

  Built build(const EpochPlan& p, int64_t b) const;
  Batch assemble(const EpochPlan& p, std::vector<int64_t> indices, Built& out) const;
  void workerLoop();
  void startThreads();
  void stopThreads();
};

// Batch b of the plan; never throws (a fatal error travels in Built::error).
Built Loader::Impl::build(const EpochPlan& p, int64_t b) const {
  Built out;
  try {
    const int64_t bs = opt.batch_size;
    const auto first = p.order.begin() + b * bs;
    const auto last = p.order.begin() + std::min<int64_t>((b + 1) * bs, static_cast<int64_t>(p.order.size()));
    Batch batch = assemble(p, std::vector<int64_t>(first, last), out);
    batch.index = b;
    batch.skipped = static_cast<int64_t>(out.bad.size());
    if (batch.y.numel() > 0) out.batch = std::move(batch);
  } catch (...) {
    out.error = std::current_exception();
  }
  return out;
}

Batch Loader::Impl::assemble(const EpochPlan& p, std::vector<int64_t> indices, Built& out) const {
  const TransformOptions& t = opt.transform;
  const Dataset& ds = *dataset;
  const bool random = detail::hasRandomOps(t);
  std::vector<detail::Rng> rngs;
  if (random)
    for (int64_t i : indices)
      rngs.push_back(detail::makeRng(detail::Stream::Sample, opt.seed, static_cast<uint64_t>(p.epoch), static_cast<uint64_t>(i)));

  torch::Tensor images, labels;
  const bool resize = t.image_size > 0 &&
                      ((t.augment && t.random_resized_crop) || ds.info().height != t.image_size || ds.info().width != t.image_size);
  if (ds.inMemory()) {
    // The fast path: one gather for the whole batch; single samples only for per-sample ops.
    auto idx = torch::from_blob(indices.data(), {static_cast<int64_t>(indices.size())}, torch::kLong);
    images = ds.gatherImages(idx);
    labels = ds.gatherLabels(idx);
    if (resize) {
      std::vector<torch::Tensor> resized;
      for (size_t k = 0; k < indices.size(); ++k) {
        detail::Rng none(0);
        resized.push_back(detail::resizeStage(images[static_cast<int64_t>(k)], t, random ? rngs[k] : none));
      }
      images = torch::stack(resized);
    }
  } else {
    std::vector<torch::Tensor> kept;
    std::vector<int64_t> keptLabels;
    std::vector<detail::Rng> keptRngs;
    for (size_t k = 0; k < indices.size(); ++k) {
      const int64_t i = indices[k];
      Sample s;
      try {
        s = ds.get(i);
      } catch (const SampleError& e) {
        out.bad.push_back({ds.describe(i), e.what()});
        continue;
      } catch (const std::exception& e) {
        const std::string path = ds.describe(i);
        throw DataError(path, path + ": " + e.what());
      }
      detail::Rng none(0);
      auto img = detail::resizeStage(s.image, t, random ? rngs[k] : none);
      if (!kept.empty() && img.sizes() != kept.front().sizes()) {
        const std::string path = ds.describe(i);
        auto dims = [](const torch::Tensor& x) {
          return std::to_string(x.size(2)) + "x" + std::to_string(x.size(1)) + "x" + std::to_string(x.size(0));
        };
        throw DataError(path, path + ": image is " + dims(img) + " (WxHxC) but others in its batch are " +
                                  dims(kept.front()) + "; set data.image_size to resize every image");
      }
      kept.push_back(img.contiguous());
      keptLabels.push_back(s.label);
      if (random) keptRngs.push_back(rngs[k]);
    }
    rngs = std::move(keptRngs);
    if (kept.empty()) return Batch{torch::Tensor(), torch::empty({0}, torch::kLong), 0, 0};
    images = torch::stack(kept);
    labels = torch::tensor(keptLabels, torch::kLong);
  }
  if (random) {
    images = images.contiguous();
    const int64_t c = images.size(1), h = images.size(2), w = images.size(3);
    uint8_t* base = images.data_ptr<uint8_t>();
    for (int64_t k = 0; k < images.size(0); ++k) detail::cropFlipInPlace(base + k * c * h * w, c, h, w, t, rngs[k]);
  }
  images = detail::convertChannels(images, outChannels);
  // Pinned: the labels too, so the trainer's copy of both is asynchronous (a pageable source
  // makes a non_blocking copy synchronous).
  if (pinned) labels = labels.pin_memory();
  return Batch{detail::toFloat(images, table, pinned), labels, 0, 0};
}

void Loader::Impl::workerLoop() {
  const int64_t capacity = static_cast<int64_t>(opt.workers) * std::max(1, opt.prefetch_per_worker);
  for (;;) {
    std::shared_ptr<const EpochPlan> p;
    int64_t b = 0;
    {
      std::unique_lock<std::mutex> lk(mu);
      workCv.wait(lk, [&] {
        return stopping || (active && nextDispatch < plan->batches && nextDispatch < nextReturn + capacity);
      });
      if (stopping) return;
      p = plan;
      b = nextDispatch++;
    }
    Built r = build(*p, b);
    std::lock_guard<std::mutex> lk(mu);
    if (p->generation == generation && active) {
      ready.emplace(b, std::move(r));
      readyCv.notify_all();
    }
  }
}

void Loader::Impl::startThreads() {
  if (opt.workers <= 0 || !threads.empty()) return;
  for (int i = 0; i < opt.workers; ++i) threads.emplace_back([this] { workerLoop(); });
}

void Loader::Impl::stopThreads() {
  {
    std::lock_guard<std::mutex> lk(mu);
    stopping = true;
    active = false;
    ready.clear();
  }
  workCv.notify_all();
  readyCv.notify_all();
  for (auto& t : threads) t.join();
  threads.clear();
  std::lock_guard<std::mutex> lk(mu);
  stopping = false;
}

Loader::Loader(std::shared_ptr<const Dataset> dataset, LoaderOptions options) : impl_(std::make_unique<Impl>()) {
  if (!dataset) throw std::invalid_argument("Loader: dataset is null");
  if (options.batch_size < 1)
    throw std::invalid_argument("Loader: batch_size " + std::to_string(options.batch_size) + " must be >= 1");
  if (options.workers < 0) throw std::invalid_argument("Loader: workers must be >= 0");
  auto& d = *impl_;
  d.dataset = std::move(dataset);
  d.opt = options;
  d.pinned = options.pin_memory && torch::cuda::is_available();
  const DatasetInfo& info = d.dataset->info();
  d.outChannels = options.transform.channels > 0 ? options.transform.channels : info.channels;
  d.table = detail::normalisationTable(info, d.outChannels, options.transform.normalize);
  // epochOrder validates rank / world_size here, before any thread exists.
  (void)epochOrder(0, options.seed, 0, false, options.rank, options.world_size);
  d.samplesPerEpoch = info.size > 0 ? (info.size + options.world_size - 1) / options.world_size : 0;
  d.wholeEpoch = std::max<int64_t>(info.size, 0);
  d.batchesPerEpoch = options.drop_last ? d.samplesPerEpoch / options.batch_size
                                        : (d.samplesPerEpoch + options.batch_size - 1) / options.batch_size;
  d.onWarning = [](const std::string& message, const std::string&) {
    std::fprintf(stderr, "warning: %s\n", message.c_str());
  };
}

Loader::~Loader() { stop(); }

int64_t Loader::batchesPerEpoch() const { return impl_->batchesPerEpoch; }
int64_t Loader::samplesPerEpoch() const { return impl_->samplesPerEpoch; }
const LoaderOptions& Loader::options() const { return impl_->opt; }
int64_t Loader::badSamples() const { return impl_->badTotal; }
int64_t Loader::badThisEpoch() const { return impl_->badEpoch; }

namespace {

// "3 unreadable samples in this epoch (over every rank) exceed the 1 % of its 136 samples that
// Unreadable samples allowed (data.max_bad_fraction) lets a run skip (last: …); fix or remove …".
// `where`: "", " (over every rank)", " on rank 1 alone".
std::string unreadableWords(int64_t bad, int64_t whole, const std::string& where, double maxBadFraction, const std::string& last) {
  const FieldSpec* spec = findFieldSpec("data.max_bad_fraction");
  return std::to_string(bad) + " unreadable samples in this epoch" + where +
         " exceed the " + shortNumber(maxBadFraction * 100) + " % of its " + std::to_string(whole) + " samples that " +
         (spec ? spec->label : "") + " (data.max_bad_fraction) lets a run skip" + (last.empty() ? "" : " (last: " + last + ")") +
         "; fix or remove the files, or raise data.max_bad_fraction";
}

}  // namespace

void Loader::judgeUnreadable(int64_t badOverRanks) const {
  const auto& d = *impl_;
  if (tooManyUnreadable(badOverRanks, d.wholeEpoch, d.opt.max_bad_fraction))
    throw DataError("", unreadableWords(badOverRanks, d.wholeEpoch, d.opt.world_size > 1 ? " (over every rank)" : "",
                                        d.opt.max_bad_fraction, ""));
}
bool Loader::pinMemoryActive() const { return impl_->pinned; }

void Loader::setWarningHandler(std::function<void(const std::string&, const std::string&)> fn) {
  impl_->onWarning = std::move(fn);
}

void Loader::startEpoch(int epoch, int64_t skip_batches) {
  auto& d = *impl_;
  auto p = std::make_shared<EpochPlan>();
  p->epoch = epoch;
  p->order = epochOrder(d.dataset->size(), d.opt.seed, epoch, d.opt.shuffle, d.opt.rank, d.opt.world_size);
  p->batches = d.batchesPerEpoch;
  {
    std::lock_guard<std::mutex> lk(d.mu);
    p->generation = ++d.generation;
    d.plan = p;
    d.ready.clear();
    d.nextDispatch = d.nextReturn = std::clamp<int64_t>(skip_batches, 0, p->batches);
    d.active = true;
  }
  d.badEpoch = 0;
  d.startThreads();
  d.workCv.notify_all();
}

std::optional<Batch> Loader::next() {
  auto& d = *impl_;
  for (;;) {
    Built r;
    {
      std::unique_lock<std::mutex> lk(d.mu);
      if (!d.active || d.nextReturn >= d.plan->batches) return std::nullopt;
      const int64_t b = d.nextReturn;
      if (d.threads.empty()) {
        auto p = d.plan;
        lk.unlock();
        r = d.build(*p, b);
        lk.lock();
      } else {
        const uint64_t gen = d.generation;
        d.readyCv.wait(lk, [&] { return !d.active || d.generation != gen || d.ready.count(b) > 0; });
        if (!d.active || d.generation != gen) return std::nullopt;
        auto it = d.ready.find(b);
        r = std::move(it->second);
        d.ready.erase(it);
      }
      ++d.nextReturn;
    }
    d.workCv.notify_all();

    if (r.error) {
      try {
        std::rethrow_exception(r.error);
      } catch (const DataError&) {
        throw;
      } catch (const std::exception& e) {
        throw DataError("", std::string("loading batch: ") + e.what());
      }
    }
    for (const auto& bad : r.bad) {
      ++d.badTotal;
      ++d.badEpoch;
      if (d.warned.insert(bad.path).second && d.onWarning)
        d.onWarning("skipped unreadable sample " + bad.message, bad.path);
      // This rank's shard alone, against what the whole epoch allows (the dataset check's rule for
      // every device count): a rank past it is past it for all ranks together too.
      if (tooManyUnreadable(d.badEpoch, d.wholeEpoch, d.opt.max_bad_fraction))
        throw DataError(bad.path, unreadableWords(d.badEpoch, d.wholeEpoch,
                                                  d.opt.world_size > 1 ? " on rank " + std::to_string(d.opt.rank) + " alone" : "",
                                                  d.opt.max_bad_fraction, bad.message));
    }
    if (r.batch) return std::move(r.batch);
  }
}

void Loader::stop() { impl_->stopThreads(); }

}  // namespace wb::data
