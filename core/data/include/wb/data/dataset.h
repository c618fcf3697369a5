#pragma once
// Datasets: IDX (MNIST / Fashion-MNIST, raw or .gz), CIFAR-10 binary batches, ImageFolder.
// Thread affinity: Dataset::get / getBatch are called concurrently from loader threads and must
// be thread-safe (const, no shared mutable state). Errors: open* return Result with a message
// naming the path and the layout expected; get() throws SampleError for one unreadable sample.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "wb/common/config.h"
#include "wb/common/result.h"

namespace wb::data {

struct DatasetInfo {
  std::string name;                    // "fashion-mnist", "idx:/x", "folder:/y", ...
  std::string split;                   // "train" | "val" | "test"
  int64_t size = 0;
  int channels = 1;                    // native channels
  int height = 0;                      // native size (0 = varies: ImageFolder)
  int width = 0;
  int num_classes = 0;
  std::vector<std::string> class_names;
  std::vector<int64_t> class_counts;   // samples per class
  std::vector<double> mean;            // per-channel normalisation constants (0..1 scale)
  std::vector<double> stddev;
};

// One decoded sample: uint8 image [C,H,W] (contiguous, CPU) and its label.
struct Sample {
  torch::Tensor image;
  int64_t label = 0;
};

// Thrown by Dataset::get for a sample that cannot be read or decoded.
class SampleError : public std::runtime_error {
 public:
  SampleError(int64_t index, std::string path, const std::string& what)
      : std::runtime_error(path + ": " + what), index_(index), path_(std::move(path)) {}
  int64_t index() const { return index_; }
  const std::string& path() const { return path_; }

 private:
  int64_t index_;
  std::string path_;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual const DatasetInfo& info() const = 0;
  int64_t size() const { return info().size; }
  virtual Sample get(int64_t index) const = 0;
  // Where sample `index` comes from: a file path, or "file#record".
  virtual std::string describe(int64_t index) const = 0;
  // True when every sample has the same shape and lives in memory (fast batched gather).
  virtual bool inMemory() const { return false; }
  // uint8 [N,C,H,W] of the given indices; only for inMemory() datasets.
  virtual torch::Tensor gatherImages(const torch::Tensor& indices) const;
  virtual torch::Tensor gatherLabels(const torch::Tensor& indices) const;
};

// A view of a subset of another dataset (val_fraction split, limit_*).
std::shared_ptr<Dataset> subset(std::shared_ptr<Dataset> base, std::vector<int64_t> indices, std::string split);

struct Splits {
  std::shared_ptr<Dataset> train;
  std::shared_ptr<Dataset> val;
};

// Opens data.dataset per the config: train = the train split (minus a held-out val_fraction,
// chosen by seed), val = the test split or the held-out part; limit_train / limit_val take the
// first N. Errors (Errc::Data) name the path and the layout expected.
Result<Splits> openSplits(const DataConfig& config, uint64_t seed);

// Opens one split of a dataset spec ("fashion-mnist", "idx:<dir>", "cifar10:<dir>", "folder:<dir>").
// split = "train" | "test". ImageFolder: <dir>/train and <dir>/test (or val) when present, else
// <dir> itself is the train split and "test" fails with a message saying to set data.val_fraction.
Result<std::shared_ptr<Dataset>> openDataset(const std::string& spec, const std::string& split);

// Writes a dataset as an ImageFolder (<dir>/<split>/<class>/<index>.<format>), atomic per file.
// format = "png" | "jpg"; size = 0 keeps the native size. progress(done, total) may be null.
Status exportImageFolder(const Dataset& dataset, const std::string& dir, const std::string& format,
                         int size, const std::function<void(int64_t, int64_t)>& progress);

}  // namespace wb::data
