#pragma once
// Datasets: IDX (MNIST / Fashion-MNIST, raw or .gz), CIFAR-10 binary batches, ImageFolder.
// Thread affinity: Dataset::get / gather* / label are called concurrently from loader threads
// and must be thread-safe (const, no shared mutable state). Errors: open* return Result with a
// message naming the path and the layout expected; get() throws SampleError for one unreadable
// sample (the loader skips and counts it).
//
// Readers:
//   IDX      <dir>/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (also the "*.idx3-ubyte"
//            spelling); held in memory as uint8 [N,1,H,W]. Truncated files, a wrong magic number
//            and image/label count mismatches are errors naming the file.
//   CIFAR-10 <dir>[/cifar-10-batches-bin]/data_batch_1..5.bin, test_batch.bin, batches.meta.txt;
//            held in memory as uint8 [N,3,32,32].
//   Folder   <dir>/train + <dir>/test (or val), else <dir> alone (= train); one sub-folder per
//            class, sorted by name; *.jpg|*.jpeg|*.png (any case) sorted by name. Decoded with
//            OpenCV on each get() (in the loader threads): 1 channel when every image of the
//            statistics sample is grayscale, else RGB. An EMPTY CLASS FOLDER IS A WARNING, not an
//            error: the class keeps its label (count 0) so labels stay aligned across splits, and
//            DatasetInfo::problems names the folder (and ::warnings: a run says it too). A
//            folder with no images at all is an error. Symbolic links are followed, each folder
//            once: a link back into a folder already walked (`ln -s . loop`), a link to itself
//            and a dangling link are skipped, each a warning naming it.
// Normalisation constants: the published ones for MNIST / Fashion-MNIST / CIFAR-10; ImageFolder
// estimates them from a deterministic sample of up to 256 evenly spaced images.
#include <cstdint>
#include <functional>
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
  // Warnings found while opening (empty class folders, unreadable images in the statistics
  // sample, mixed image sizes). Empty = nothing found; these never stop a run by themselves.
  std::vector<std::string> problems;
  // Those of the problems a run on the data must say too (a `warning` event each): an empty
  // class folder, an entry skipped (a symbolic link loop, a link that cannot be resolved).
  std::vector<std::string> warnings;
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
  // The label of sample `index` without decoding it (default: get(index).label).
  virtual int64_t label(int64_t index) const;
  // Where sample `index` comes from: a file path, or "file#record".
  virtual std::string describe(int64_t index) const = 0;
  // True when every sample has the same shape and lives in memory (fast batched gather).
  virtual bool inMemory() const { return false; }
  // uint8 [N,C,H,W] of the given int64 indices; only for inMemory() datasets (others throw
  // std::logic_error). gatherLabels: int64 [N]; works for every dataset (via label()).
  virtual torch::Tensor gatherImages(const torch::Tensor& indices) const;
  virtual torch::Tensor gatherLabels(const torch::Tensor& indices) const;
};

// A view of a subset of another dataset (val_fraction split, limit_*): sample i of the view is
// sample indices[i] of base. info() is base's with size, split and class_counts recomputed.
// Indices out of range throw std::out_of_range (a broken invariant).
std::shared_ptr<Dataset> subset(std::shared_ptr<Dataset> base, std::vector<int64_t> indices, std::string split);

// Known dataset specs: "fashion-mnist" (= idx:wb::defaultFashionMnistDir()), "idx:<dir>",
// "cifar10:<dir>", "folder:<dir>".
struct DatasetSpec {
  std::string kind;   // "idx" | "cifar10" | "folder"
  std::string dir;
  std::string name;   // the spec as given (DatasetInfo::name)
};
Result<DatasetSpec> parseDatasetSpec(const std::string& spec);
// The dataset's files' fingerprint (wb::folderFingerprint of its folder): what keys the
// experiment's reference runs, wherever they are computed. "" for a spec that does not parse.
std::string datasetFingerprint(const std::string& spec);

struct Splits {
  std::shared_ptr<Dataset> train;
  std::shared_ptr<Dataset> val;
};

// Opens data.dataset per the config: train = the train split (minus a held-out val_fraction,
// chosen by seed; both parts keep dataset order), val = the test split or the held-out part;
// limit_train / limit_val take the first N. val carries train's normalisation constants. Errors
// (Errc::Data) name the path and the layout expected; Errc::InvalidConfig for a val_fraction
// outside [0,1) or one that leaves a split empty; train and val class lists must agree.
Result<Splits> openSplits(const DataConfig& config, uint64_t seed);

// Opens one split of a dataset spec ("fashion-mnist", "idx:<dir>", "cifar10:<dir>", "folder:<dir>").
// split = "train" | "test". ImageFolder: <dir>/train and <dir>/test (or val) when present, else
// <dir> itself is the train split and "test" fails with a message saying to set data.val_fraction.
Result<std::shared_ptr<Dataset>> openDataset(const std::string& spec, const std::string& split);

// Writes a dataset as an ImageFolder (<dir>/<split>/<class>/<index>.<format>), atomic per file
// (temp file + rename). Class folders are "<label>_<name>" (label zero-padded, name reduced to
// [A-Za-z0-9._-]) so that reading the export back sorts classes in the original label order;
// every class gets a folder, even one with no samples. <index> is zero-padded so files sort in
// dataset order. format = "png" | "jpg" (quality 95); size = 0 keeps the native size, else
// resizes to size x size. progress(done, total) is called from the calling thread; may be null.
// Unreadable samples are skipped and reported at the end as an Errc::Data error.
Status exportImageFolder(const Dataset& dataset, const std::string& dir, const std::string& format,
                         int size, const std::function<void(int64_t, int64_t)>& progress);

}  // namespace wb::data
