#pragma once
// Threaded, ordered, bounded-prefetch loader (the LibTorch dataloader's contract): workers = 0
// loads inside next(); N > 0 uses N threads. The batch sequence depends only on (seed, epoch,
// rank, world_size), never on the worker count: per-sample augmentation RNG is seeded from
// (seed, epoch, sample index). Worker exceptions travel as std::exception_ptr with the batch
// number and are rethrown by next(). The destructor stops and joins the workers.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "wb/data/dataset.h"

namespace wb::data {

struct TransformOptions {
  bool augment = false;        // train-time random ops on/off (off for eval)
  int crop_padding = 0;        // random crop with zero padding
  bool hflip = false;          // random horizontal flip
  int image_size = 0;          // resize to this square size (0 = native); ImageFolder train uses
                               // random-resized-crop when augment && image_size > 0
  bool random_resized_crop = false;
  bool normalize = true;       // (x/255 - mean) / std with the dataset's constants
  int channels = 0;            // force channel count (0 = native): gray<->RGB conversion
};

struct LoaderOptions {
  int batch_size = 64;
  int workers = 0;
  int prefetch_per_worker = 2; // bounded queue: workers * prefetch batches in flight at most
  bool shuffle = true;
  bool drop_last = false;
  uint64_t seed = 1;
  int rank = 0;
  int world_size = 1;
  bool pin_memory = false;     // CUDA builds: batches land in pinned host memory
  double max_bad_fraction = 0.01;
  TransformOptions transform;
};

// A float batch ready for the model: x float32 [B,C,H,W] (normalised), y int64 [B].
struct Batch {
  torch::Tensor x;
  torch::Tensor y;
  int64_t index = 0;            // batch number within the epoch
  int64_t skipped = 0;          // unreadable samples dropped from this batch
};

// Sample order of one epoch for one rank (DistributedSampler semantics: a seeded permutation,
// padded to a multiple of world_size by wrapping, then every world_size-th from rank).
std::vector<int64_t> epochOrder(int64_t dataset_size, uint64_t seed, int epoch, bool shuffle, int rank,
                                int world_size);

class Loader {
 public:
  Loader(std::shared_ptr<const Dataset> dataset, LoaderOptions options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  int64_t batchesPerEpoch() const;
  int64_t samplesPerEpoch() const;
  // Begins an epoch; skip_batches resumes mid-epoch (exact resume).
  void startEpoch(int epoch, int64_t skip_batches = 0);
  // The next batch in order, or nullopt at the end of the epoch. Rethrows a worker's exception
  // (wb::data::DataError naming the sample's path). Thread affinity: one consumer thread.
  std::optional<Batch> next();
  // Stops the workers mid-epoch (clean shutdown; next() returns nullopt afterwards).
  void stop();

  // Called (from the consumer thread, inside next()) for each skipped sample.
  void setWarningHandler(std::function<void(const std::string& message, const std::string& path)> fn);
  int64_t badSamples() const;   // total skipped so far

  const LoaderOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The run-level error for data problems: the trainer turns it into an `error` event, exit 3.
class DataError : public std::runtime_error {
 public:
  DataError(std::string path, const std::string& what)
      : std::runtime_error(what), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace wb::data
