#pragma once
// The decoded-sample cache (speedups.decoded_cache): an image folder decodes every sample every
// epoch; the cache decodes each once and keeps its pixels, exactly as the reader returned them
// (uint8 [C,H,W] at the file's own size), so the loader's resize, random-resized crop, crop and
// flip still run per sample and epoch and the batches equal those without the cache.
//
//   memory  an anonymous mapping in this process (each rank holds its own).
//   disk    a memory-mapped file in data.cache_dir (default wb::defaultCacheDir()), named by the
//           dataset, the split and a key over every sample's file path, size and modification
//           time: a later run on unchanged files finds the pixels decoded; a changed, added or
//           removed file gives another key, and the older files of that dataset and split are
//           removed. Ranks of one run share the file (an flock guards its set-up).
//
// The space is sized up front: the decoded bytes (exact when every image has one size, else the
// mean of up to 32 evenly spaced decoded samples x the count, plus a quarter). It is refused,
// naming the sizes, when memory needs more than 80 % of MemAvailable or the disk has less free
// room (the file's blocks are allocated at once, so a full disk cannot fault a run later). A
// sample that no longer fits (an estimate short of the truth) is decoded each time and counted.
// Unreadable samples are not cached: they are read again and skipped by the loader each epoch.
// Datasets held in memory already (IDX, CIFAR-10 binary batches) decode nothing: not wrapped.
// Thread affinity: get() from any number of loader threads and processes at once.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/data/dataset.h"

namespace wb::data {

struct CacheOptions {
  std::string mode = "memory";  // "memory" | "disk"
  std::string dir;              // disk: the folder ("" = wb::defaultCacheDir())
};

class DecodedCache : public Dataset {
 public:
  // `bytes`: the space to set aside (estimateDecodedBytes); errors name the sizes and the folder.
  static Result<std::shared_ptr<DecodedCache>> open(std::shared_ptr<Dataset> base, const CacheOptions& options,
                                                    int64_t bytes);
  ~DecodedCache() override;

  const DatasetInfo& info() const override { return base_->info(); }
  Sample get(int64_t index) const override;
  int64_t label(int64_t index) const override { return base_->label(index); }
  std::string describe(int64_t index) const override { return base_->describe(index); }

  int64_t decodes() const { return decodes_.load(); }        // samples the base decoded through this cache
  int64_t hits() const { return hits_.load(); }              // samples served from the cache
  int64_t overflowed() const { return overflowed_.load(); }  // decoded, but did not fit
  int64_t cachedAtOpen() const { return cachedAtOpen_; }     // disk: samples a previous run left decoded
  int64_t capacityBytes() const { return capacity_; }
  const std::string& file() const { return file_; }          // disk: the cache file; memory: ""

  struct Layout;

 private:
  DecodedCache(std::shared_ptr<Dataset> base) : base_(std::move(base)) {}
  Status mapMemory();
  Status mapFile(const std::string& dir);
  Status initialise(bool fresh);
  void store(int64_t index, const torch::Tensor& image) const;

  std::shared_ptr<Dataset> base_;
  int64_t capacity_ = 0;
  size_t mappedBytes_ = 0;
  char* map_ = nullptr;
  int fd_ = -1;
  std::string file_;
  int64_t cachedAtOpen_ = 0;
  mutable std::atomic<int64_t> decodes_{0}, hits_{0}, overflowed_{0};
};

// The decoded bytes of every sample of `dataset` (see above: exact or estimated).
int64_t estimateDecodedBytes(const Dataset& dataset);

struct CacheOutcome {
  bool active = false;
  std::string note;  // for the start event: what is cached where, or why nothing is
};

// Wraps splits.train and splits.val in caches per config.speedups.decoded_cache ("off": nothing).
// Errors (Errc::InvalidConfig) name speedups.decoded_cache, the bytes needed and those available.
Result<CacheOutcome> cacheDecodedSamples(Splits& splits, const Config& config);

}  // namespace wb::data
