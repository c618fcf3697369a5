#pragma once
// Private to wb_data: the in-memory dataset shared by the IDX and CIFAR readers, the readers'
// entry points, seeded RNG helpers and the batch transforms. Not part of the include/ surface.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "wb/common/result.h"
#include "wb/data/dataset.h"
#include "wb/data/loader.h"

namespace wb::data::detail {

// ---- seeded randomness (the same on every platform) -------------------------------------------

inline uint64_t mix64(uint64_t x) {  // SplitMix64 finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Small counter-based generator: cheap to seed per sample, so every sample's augmentation
// depends only on (seed, epoch, index) and never on which thread built it.
class Rng {
 public:
  explicit Rng(uint64_t state) : s_(state) {}
  uint64_t next() { return mix64(s_++ * 0xD1B54A32D192ED03ULL); }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0,1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  int64_t below(int64_t n) { return n <= 1 ? 0 : static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t s_;
};

enum class Stream : uint64_t { Sample = 1, Permutation = 2, ValSplit = 3 };

inline Rng makeRng(Stream stream, uint64_t seed, uint64_t a = 0, uint64_t b = 0) {
  return Rng(mix64(mix64(mix64(mix64(seed) ^ static_cast<uint64_t>(stream)) ^ a) ^ b));
}

// A seeded permutation of [0, n) (Fisher-Yates).
std::vector<int64_t> permutation(int64_t n, Rng rng);

// ---- in-memory datasets (IDX, CIFAR) -----------------------------------------------------------

// uint8 images [N,C,H,W] and int64 labels [N] held in memory. `sources` maps record ranges to
// files for describe(): sample i comes from the last source whose `first` <= i.
class InMemoryDataset final : public Dataset {
 public:
  struct Source {
    int64_t first = 0;
    std::string path;
  };
  InMemoryDataset(DatasetInfo info, torch::Tensor images, torch::Tensor labels, std::vector<Source> sources);
  const DatasetInfo& info() const override { return info_; }
  Sample get(int64_t index) const override;
  int64_t label(int64_t index) const override;
  std::string describe(int64_t index) const override;
  bool inMemory() const override { return true; }
  torch::Tensor gatherImages(const torch::Tensor& indices) const override;
  torch::Tensor gatherLabels(const torch::Tensor& indices) const override;

 private:
  DatasetInfo info_;
  torch::Tensor images_;
  torch::Tensor labels_;
  const int64_t* labelPtr_;
  std::vector<Source> sources_;
};

// rows[indices] along dim 0 for a contiguous tensor, as a plain copy loop (no intra-op threads).
// Indices out of range throw std::out_of_range.
torch::Tensor gatherRows(const torch::Tensor& rows, const torch::Tensor& indices);

// Samples per class (labels outside [0, num_classes) are a broken invariant: std::logic_error).
std::vector<int64_t> classCounts(const torch::Tensor& labels, int num_classes);

// Per-channel mean and standard deviation (0..1 scale) of uint8 [N,C,H,W] images.
std::pair<std::vector<double>, std::vector<double>> channelStats(const torch::Tensor& images);

// ---- readers -----------------------------------------------------------------------------------

// `name` is the spec as given (DatasetInfo::name); split = "train" | "test".
Result<std::shared_ptr<Dataset>> openIdx(const std::string& dir, const std::string& split, const std::string& name);
// The unpacked copy of a gzipped IDX file (wb::unpackedDatasetDir(), named for the file's path,
// size and modification time), whether or not it exists yet; "" for a file that is not .gz.
std::string unpackedCopyOf(const std::string& gzPath);
Result<std::shared_ptr<Dataset>> openCifar10(const std::string& dir, const std::string& split,
                                             const std::string& name);
Result<std::shared_ptr<Dataset>> openImageFolder(const std::string& dir, const std::string& split,
                                                 const std::string& name);

// ---- transforms (transforms.cpp) ---------------------------------------------------------------

// True when the options draw random numbers per sample (crop, flip, random-resized-crop).
bool hasRandomOps(const TransformOptions& t);

// Resize / random-resized-crop of one uint8 CHW image to image_size (returns the input when
// nothing is to be done). Draws from rng only for random-resized-crop.
torch::Tensor resizeStage(const torch::Tensor& chw, const TransformOptions& t, Rng& rng);

// Random crop with zero padding, then horizontal flip, in place on one contiguous uint8 CHW image.
void cropFlipInPlace(uint8_t* chw, int64_t channels, int64_t height, int64_t width, const TransformOptions& t,
                     Rng& rng);

// uint8 [B,C,H,W] -> uint8 [B,target,H,W] (target 0 or C: unchanged). Throws DataError for
// channel counts other than 1 and 3.
torch::Tensor convertChannels(const torch::Tensor& images, int target);

// A 256-entry lookup table per output channel mapping a uint8 value to its float input value:
// (v/255 - mean)/std when normalising, else v/255. Constants follow the channel conversion.
std::vector<float> normalisationTable(const DatasetInfo& info, int out_channels, bool normalize);

// uint8 [B,C,H,W] -> float32 [B,C,H,W] through the table, in one pass; pinned host memory when
// `pinned` (the caller checked that CUDA is available).
torch::Tensor toFloat(const torch::Tensor& images, const std::vector<float>& table, bool pinned);

}  // namespace wb::data::detail
