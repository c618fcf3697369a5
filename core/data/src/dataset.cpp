// Dataset defaults, subsets, dataset specs and the train/val split policy.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include "internal.h"
#include "wb/common/fs.h"
#include "wb/common/paths.h"

namespace wb::data {

int64_t Dataset::label(int64_t index) const { return get(index).label; }

torch::Tensor Dataset::gatherImages(const torch::Tensor&) const {
  throw std::logic_error("gatherImages: " + info().name + " is not held in memory (check inMemory() first)");
}

torch::Tensor Dataset::gatherLabels(const torch::Tensor& indices) const {
  auto idx = indices.to(torch::kLong).contiguous();
  auto out = torch::empty({idx.numel()}, torch::kLong);
  const int64_t* in = idx.data_ptr<int64_t>();
  int64_t* o = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < idx.numel(); ++i) o[i] = label(in[i]);
  return out;
}

namespace {

class SubsetDataset final : public Dataset {
 public:
  SubsetDataset(std::shared_ptr<Dataset> base, std::vector<int64_t> indices, std::string split)
      : base_(std::move(base)), indices_(std::move(indices)) {
    const int64_t n = base_->size();
    for (int64_t i : indices_)
      if (i < 0 || i >= n)
        throw std::out_of_range("subset index " + std::to_string(i) + " outside [0, " + std::to_string(n) + ")");
    map_ = torch::from_blob(indices_.data(), {static_cast<int64_t>(indices_.size())}, torch::kLong).clone();
    info_ = base_->info();
    info_.split = std::move(split);
    info_.size = static_cast<int64_t>(indices_.size());
    info_.class_counts = detail::classCounts(base_->gatherLabels(map_), info_.num_classes);
  }
  const DatasetInfo& info() const override { return info_; }
  Sample get(int64_t index) const override { return base_->get(at(index)); }
  int64_t label(int64_t index) const override { return base_->label(at(index)); }
  std::string describe(int64_t index) const override { return base_->describe(at(index)); }
  bool inMemory() const override { return base_->inMemory(); }
  torch::Tensor gatherImages(const torch::Tensor& indices) const override {
    return base_->gatherImages(detail::gatherRows(map_, indices));
  }
  torch::Tensor gatherLabels(const torch::Tensor& indices) const override {
    return base_->gatherLabels(detail::gatherRows(map_, indices));
  }
  // val uses train's constants: the model sees both splits through the same normalisation.
  void setNormalisation(std::vector<double> mean, std::vector<double> stddev) {
    info_.mean = std::move(mean);
    info_.stddev = std::move(stddev);
  }

 private:
  int64_t at(int64_t index) const {
    if (index < 0 || index >= info_.size) throw std::out_of_range("sample index " + std::to_string(index));
    return indices_[static_cast<size_t>(index)];
  }
  std::shared_ptr<Dataset> base_;
  std::vector<int64_t> indices_;
  torch::Tensor map_;
  DatasetInfo info_;
};

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

void takeFirst(std::vector<int64_t>& v, int64_t limit) {
  if (limit > 0 && limit < static_cast<int64_t>(v.size())) v.resize(static_cast<size_t>(limit));
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

std::shared_ptr<Dataset> subset(std::shared_ptr<Dataset> base, std::vector<int64_t> indices, std::string split) {
  return std::make_shared<SubsetDataset>(std::move(base), std::move(indices), std::move(split));
}

Result<DatasetSpec> parseDatasetSpec(const std::string& spec) {
  if (spec == "fashion-mnist") return DatasetSpec{"idx", defaultFashionMnistDir().string(), spec};
  for (const char* kind : {"idx", "cifar10", "folder"}) {
    const std::string prefix = std::string(kind) + ":";
    if (spec.rfind(prefix, 0) == 0) {
      std::string dir = spec.substr(prefix.size());
      if (dir.empty())
        return makeError(Errc::InvalidConfig, "data.dataset: " + spec + " — needs a directory after '" + prefix + "'");
      return DatasetSpec{kind, dir, spec};
    }
  }
  return makeError(Errc::InvalidConfig, "data.dataset: '" + spec +
                                            "' — must be fashion-mnist, idx:<dir>, cifar10:<dir> or folder:<dir>");
}

std::string datasetFingerprint(const std::string& spec) {
  auto parsed = parseDatasetSpec(spec);
  return parsed.ok() ? folderFingerprint(parsed->dir) : std::string();
}

namespace {

// The in-memory splits (IDX, CIFAR-10) this process read last, one per split: a process that
// trains several times (the math check's three sides, a probe's arms) decodes the files once.
// Keyed by the spec and the files' fingerprint, so a file changed in between is read again; the
// datasets are immutable once read, so the trainers share them.
class LastRead {
 public:
  std::shared_ptr<Dataset> find(const std::string& split, const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = bySplit_.find(split);
    return it != bySplit_.end() && it->second.first == key ? it->second.second : nullptr;
  }
  void keep(const std::string& split, const std::string& key, std::shared_ptr<Dataset> d) {
    std::lock_guard<std::mutex> lock(mutex_);
    bySplit_[split] = {key, std::move(d)};
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::pair<std::string, std::shared_ptr<Dataset>>> bySplit_;  // split -> (key, dataset)
};

LastRead& lastRead() {
  static LastRead cache;
  return cache;
}

Result<std::shared_ptr<Dataset>> readDataset(const DatasetSpec& parsed, const std::string& spec, const std::string& split) {
  try {  // the readers check with error codes; a filesystem error still left is the data's, named
    if (parsed.kind == "idx") return detail::openIdx(parsed.dir, split, spec);
    if (parsed.kind == "cifar10") return detail::openCifar10(parsed.dir, split, spec);
    return detail::openImageFolder(parsed.dir, split, spec);
  } catch (const std::filesystem::filesystem_error& e) {
    return makeError(Errc::Data, spec + ": " + e.path1().string() + ": " + e.code().message());
  }
}

}  // namespace

Result<std::shared_ptr<Dataset>> openDataset(const std::string& spec, const std::string& split) {
  auto parsed = parseDatasetSpec(spec);
  if (!parsed.ok()) return parsed.error();
  if (split != "train" && split != "test")
    return makeError(Errc::Internal, "openDataset: split '" + split + "' must be train or test");
  if (parsed->kind != "idx" && parsed->kind != "cifar10") return readDataset(*parsed, spec, split);
  const std::string fingerprint = folderFingerprint(parsed->dir);
  const std::string key = spec + "\n" + fingerprint;
  if (!fingerprint.empty())
    if (auto held = lastRead().find(split, key)) return held;
  auto read = readDataset(*parsed, spec, split);
  if (read.ok() && !fingerprint.empty()) lastRead().keep(split, key, *read);
  return read;
}

Result<Splits> openSplits(const DataConfig& config, uint64_t seed) {
  if (!(config.val_fraction >= 0.0 && config.val_fraction < 1.0))
    return makeError(Errc::InvalidConfig,
                     "data.val_fraction: " + std::to_string(config.val_fraction) + " — must be in [0, 1)");
  auto train = openDataset(config.dataset, "train");
  if (!train.ok()) return train.error();
  std::shared_ptr<Dataset> base = *train;
  const int64_t n = base->size();

  std::vector<int64_t> trainIdx, valIdx;
  std::shared_ptr<Dataset> valBase;
  if (config.val_fraction > 0) {
    const auto nval = static_cast<int64_t>(std::llround(static_cast<double>(n) * config.val_fraction));
    if (nval < 1 || nval >= n)
      return makeError(Errc::InvalidConfig, "data.val_fraction: " + std::to_string(config.val_fraction) + " — holds out " +
                                                std::to_string(nval) + " of " + std::to_string(n) +
                                                " samples; each split needs at least one");
    auto perm = detail::permutation(n, detail::makeRng(detail::Stream::ValSplit, seed));
    valIdx.assign(perm.begin(), perm.begin() + nval);
    trainIdx.assign(perm.begin() + nval, perm.end());
    std::sort(valIdx.begin(), valIdx.end());  // keep dataset order: limit_* takes "the first N"
    std::sort(trainIdx.begin(), trainIdx.end());
    valBase = base;
  } else {
    auto test = openDataset(config.dataset, "test");
    if (!test.ok()) return test.error();
    valBase = *test;
    if (valBase->info().class_names != base->info().class_names)
      return makeError(Errc::Data, config.dataset + ": the test split's classes (" + joined(valBase->info().class_names) +
                                       ") differ from train's (" + joined(base->info().class_names) +
                                       "): give both splits the same class folders");
    trainIdx = iota(n);
    valIdx = iota(valBase->size());
  }
  takeFirst(trainIdx, config.limit_train);
  takeFirst(valIdx, config.limit_val);

  Splits out;
  const bool wholeTrain = static_cast<int64_t>(trainIdx.size()) == n && config.val_fraction == 0;
  out.train = wholeTrain ? base : subset(base, std::move(trainIdx), "train");
  auto val = std::make_shared<SubsetDataset>(valBase, std::move(valIdx), "val");
  val->setNormalisation(base->info().mean, base->info().stddev);
  out.val = std::move(val);
  return out;
}

}  // namespace wb::data
