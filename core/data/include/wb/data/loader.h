#pragma once
// Threaded, ordered, bounded-prefetch loader (the LibTorch dataloader's contract): workers = 0
// loads inside next(); N > 0 uses N threads. The batch sequence depends only on (seed, epoch,
// rank, world_size), never on the worker count: per-sample augmentation RNG is seeded from
// (seed, epoch, sample index). Worker exceptions travel as std::exception_ptr with the batch
// number and are rethrown by next(). The destructor stops and joins the workers.
//
// Per batch: in-memory datasets are gathered with one copy loop; other datasets decode each
// sample with get(). Per-sample ops (uint8, in this order, RNG drawn in this order): resize or
// random-resized-crop to image_size, random crop with zero padding, horizontal flip. Then, for
// the whole batch: channel conversion (gray->RGB replicates, RGB->gray uses ITU-R 601 weights),
// one vectorised uint8->float32 conversion with normalisation. In-memory datasets without
// per-sample ops never touch single samples (the fast path the trainer's throughput rests on).
//
// Bad samples: a SampleError skips the sample (Batch::skipped, badSamples(), the warning handler
// once per sample path). The rule (wb/data/usability.h tooManyUnreadable, the dataset check's) is
// judged over the whole epoch, every rank's shard together: more than max_bad_fraction x the
// dataset's samples unreadable. next() throws DataError once this rank's own bad samples of the
// epoch exceed that (then all ranks' do), as soon as it is certain; what the ranks found together
// is judged by judgeUnreadable with their sum (the trainer's, at each step event and evaluation),
// so a run of two devices stops where a run of one would, and not before. A batch whose samples
// are all bad is skipped entirely. Any
// other exception from a sample is fatal: next() throws DataError naming describe(index).
// The fast path's gather and float conversion are plain loops (no ATen intra-op threads competing
// with the training step). A Loader never changes global thread settings.
#include <array>
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
  bool random_resized_crop = false; // only with augment && image_size > 0: torchvision's
                                    // RandomResizedCrop (scale 0.08..1, ratio 3/4..4/3)
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
  bool pin_memory = false;     // batches land in pinned host memory when CUDA is available at
                               // run time; a no-op otherwise (pinMemoryActive() tells which)
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
// padded to a multiple of world_size by wrapping, then every world_size-th from rank). The
// permutation depends only on (seed, epoch) (SplitMix64 + Fisher-Yates: the same on every
// platform). Throws std::invalid_argument for world_size < 1 or rank outside [0, world_size).
std::vector<int64_t> epochOrder(int64_t dataset_size, uint64_t seed, int epoch, bool shuffle, int rank,
                                int world_size);

// The transforms a split gets from the experiment config: train => augment per data.augment,
// random-resized-crop for ImageFolder train when image_size > 0; eval => no random ops.
// `channels` is left 0 (native); the trainer sets it when the model needs a fixed count.
TransformOptions transformOptionsFor(const DataConfig& data, const DatasetInfo& info, bool train);

// Shape {C, H, W} of the loader's x for this dataset and these transforms; H = W = 0 when the
// dataset's images vary in size and no image_size is set (such a loader fails on the first
// batch with mixed sizes, telling the user to set data.image_size).
std::array<int64_t, 3> outputShape(const DatasetInfo& info, const TransformOptions& transform);

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
  // Stops the workers mid-epoch (clean shutdown; next() returns nullopt afterwards until the
  // next startEpoch). Joins the worker threads; waits for batches being built to finish.
  void stop();

  // Called (from the consumer thread, inside next()) for each skipped sample.
  void setWarningHandler(std::function<void(const std::string& message, const std::string& path)> fn);
  int64_t badSamples() const;   // total skipped so far (every epoch)
  int64_t badThisEpoch() const; // skipped in the current epoch, by this rank
  // Throws DataError when `badOverRanks` (the current epoch's bad samples, summed over every rank)
  // exceed what the rule allows for the whole epoch. Thread affinity: the consumer thread.
  void judgeUnreadable(int64_t badOverRanks) const;
  // True when batches are allocated in pinned memory (pin_memory and CUDA available).
  bool pinMemoryActive() const;

  const LoaderOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The run-level error for data problems: the trainer turns it into an `error` event, exit 3.
// path() is the sample at fault (describe(index)), or empty when no single sample is.
class DataError : public std::runtime_error {
 public:
  DataError(std::string path, const std::string& what)
      : std::runtime_error(what), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace wb::data
