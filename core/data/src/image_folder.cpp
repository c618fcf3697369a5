// ImageFolder: reading (one sub-folder per class, decoded on demand in the loader threads) and
// writing any dataset in that layout (`workbench-cli dataset export`).
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "image_ops.h"
#include "internal.h"

namespace fs = std::filesystem;

namespace wb::data {

namespace detail {
namespace {

constexpr int kStatsSample = 256;

std::string lowerExt(const fs::path& p) {
  std::string e = p.extension().string();
  for (auto& ch : e) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return e;
}

bool isImageFile(const fs::path& p) {
  const auto e = lowerExt(p);
  return e == ".jpg" || e == ".jpeg" || e == ".png";
}

bool isDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// A problem a run must say too (DatasetInfo::warnings).
void warnAbout(DatasetInfo& info, const std::string& what) {
  info.problems.push_back(what);
  info.warnings.push_back(what);
}

// Whether `inner` is `outer` or lies under it (both canonical).
bool within(const fs::path& inner, const fs::path& outer) {
  const std::string i = inner.string(), o = outer.string();
  return i.compare(0, o.size(), o) == 0 && (i.size() == o.size() || i[o.size()] == '/' || o == "/");
}

// The images under one class folder. Links are followed, each folder once: a link to a folder
// that holds it (`ln -s . loop`, `ln -s .. up`) or to one already walked is not followed, and an
// entry whose link cannot be resolved (a link to itself, a dangling link) is skipped; each is a
// warning naming it.
Result<std::vector<std::string>> classImages(const fs::path& classDir, DatasetInfo& info) {
  std::vector<std::string> found;
  std::error_code ec;
  std::set<fs::path> walked{fs::canonical(classDir, ec)};
  std::vector<std::pair<fs::path, fs::path>> todo{{classDir, *walked.begin()}};  // (path, canonical)
  while (!todo.empty()) {
    const auto [dir, dirCanon] = todo.back();
    todo.pop_back();
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path path = it->path();
      std::error_code sec;
      const fs::file_status st = fs::status(path, sec);  // through the links
      if (sec) {
        warnAbout(info, path.string() + ": skipped, it cannot be resolved (" + sec.message() + ")");
      } else if (fs::is_directory(st)) {
        const fs::path canon = fs::canonical(path, sec);
        if (!sec && within(dirCanon, canon))
          warnAbout(info, path.string() + ": skipped, a symbolic link loop (it leads back to " + canon.string() +
                              ", which holds it)");
        else if (sec || !walked.insert(canon).second)
          warnAbout(info, path.string() + ": skipped, it leads to " + canon.string() + ", a folder already walked");
        else
          todo.emplace_back(path, canon);
      } else if (fs::is_regular_file(st) && isImageFile(path)) {
        found.push_back(path.string());
      }
    }
    if (ec) return makeError(Errc::Data, info.name + ": cannot list " + dir.string() + " (" + ec.message() + ")");
  }
  std::sort(found.begin(), found.end());
  return found;
}

// The class folders of a split: its sub-folders, but not a hidden one nor a link back to the
// split folder or above it (each a warning).
Result<std::vector<fs::path>> classFolders(const fs::path& splitDir, DatasetInfo& info) {
  std::vector<fs::path> classDirs;
  std::error_code ec;
  const fs::path splitCanon = fs::canonical(splitDir, ec);
  for (fs::directory_iterator it(splitDir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path path = it->path();
    if (path.filename().string().rfind('.', 0) == 0) continue;
    std::error_code sec;
    const fs::file_status st = fs::status(path, sec);
    if (sec) {
      warnAbout(info, path.string() + ": skipped, it cannot be resolved (" + sec.message() + ")");
      continue;
    }
    if (!fs::is_directory(st)) continue;
    const fs::path canon = fs::canonical(path, sec);
    if (!sec && within(splitCanon, canon)) {
      warnAbout(info, path.string() + ": skipped, a symbolic link loop (it leads back to " + canon.string() +
                          ", which holds it)");
      continue;
    }
    classDirs.push_back(path);
  }
  if (ec) return makeError(Errc::Data, info.name + ": cannot list " + splitDir.string() + " (" + ec.message() + ")");
  std::sort(classDirs.begin(), classDirs.end());
  return classDirs;
}

std::string folderLayout(const std::string& dir) {
  return "expected " + dir + "/train/<class>/*.jpg|png with " + dir + "/test (or val) beside it, or " + dir +
         "/<class>/*.jpg|png";
}

class ImageFolderDataset final : public Dataset {
 public:
  ImageFolderDataset(DatasetInfo info, std::vector<std::string> files, std::vector<int64_t> labels)
      : info_(std::move(info)), files_(std::move(files)), labels_(std::move(labels)) {}
  const DatasetInfo& info() const override { return info_; }
  Sample get(int64_t index) const override {
    const auto& path = files_.at(static_cast<size_t>(index));
    return {matToChw(decodeImageFile(path, info_.channels, index)), labels_[static_cast<size_t>(index)]};
  }
  int64_t label(int64_t index) const override { return labels_.at(static_cast<size_t>(index)); }
  std::string describe(int64_t index) const override { return files_.at(static_cast<size_t>(index)); }

 private:
  DatasetInfo info_;
  std::vector<std::string> files_;
  std::vector<int64_t> labels_;
};

// Estimates channels, size and per-channel mean/std from up to kStatsSample evenly spaced images
// (deterministic: no RNG). Unreadable images in the sample are reported as problems.
void estimateStatistics(const std::vector<std::string>& files, DatasetInfo& info) {
  struct ImageStats {
    int channels;
    std::array<double, 3> sum, sq;
    double pixels;
  };
  const int64_t n = static_cast<int64_t>(files.size());
  const int64_t k = std::min<int64_t>(n, kStatsSample);
  std::vector<ImageStats> stats;
  std::map<std::pair<int, int>, int64_t> sizes;
  int64_t unreadable = 0;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t i = j * n / k;
    cv::Mat img;
    try {
      const auto bytes = readBytes(files[i], i);
      if (!truncationProblem(bytes)) img = cv::imdecode(bytes, cv::IMREAD_UNCHANGED);
    } catch (const std::exception& e) {
      img = cv::Mat();
    }
    if (img.empty()) {
      if (++unreadable <= 3) info.problems.push_back(files[i] + ": cannot be decoded as JPEG/PNG (corrupt?)");
      continue;
    }
    if (img.depth() != CV_8U) img.convertTo(img, CV_8U, 1.0 / 257.0);
    if (img.channels() == 4) cv::cvtColor(img, img, cv::COLOR_BGRA2RGB);
    else if (img.channels() == 3) cv::cvtColor(img, img, cv::COLOR_BGR2RGB);
    ImageStats s{img.channels(), {0, 0, 0}, {0, 0, 0}, static_cast<double>(img.total())};
    cv::Mat f;
    img.convertTo(f, CV_64F, 1.0 / 255.0);
    const cv::Scalar sum = cv::sum(f), sq = cv::sum(f.mul(f));
    for (int c = 0; c < s.channels; ++c) {
      s.sum[c] = sum[c];
      s.sq[c] = sq[c];
    }
    stats.push_back(s);
    ++sizes[{img.cols, img.rows}];
  }
  if (unreadable > 3) info.problems.push_back(std::to_string(unreadable) + " of " + std::to_string(k) +
                                              " images sampled for statistics cannot be decoded");
  const bool color = std::any_of(stats.begin(), stats.end(), [](const ImageStats& s) { return s.channels > 1; });
  info.channels = color ? 3 : 1;
  std::array<double, 3> sum{0, 0, 0}, sq{0, 0, 0};
  double pixels = 0;
  for (const auto& s : stats) {
    for (int c = 0; c < info.channels; ++c) {
      const int from = s.channels == 1 ? 0 : c;  // a gray image counts the same in R, G and B
      sum[c] += s.sum[from];
      sq[c] += s.sq[from];
    }
    pixels += s.pixels;
  }
  info.mean.clear();
  info.stddev.clear();
  for (int c = 0; c < info.channels; ++c) {
    const double m = pixels > 0 ? sum[c] / pixels : 0.5;
    const double var = pixels > 0 ? std::max(0.0, sq[c] / pixels - m * m) : 0.0;
    info.mean.push_back(m);
    info.stddev.push_back(var > 0 ? std::sqrt(var) : 1.0);
  }
  if (sizes.size() == 1) {
    info.width = sizes.begin()->first.first;
    info.height = sizes.begin()->first.second;
  } else if (sizes.size() > 1) {
    info.width = info.height = 0;
    const auto a = sizes.begin()->first, b = std::next(sizes.begin())->first;
    info.problems.push_back("images differ in size (e.g. " + std::to_string(a.first) + "x" + std::to_string(a.second) +
                            " and " + std::to_string(b.first) + "x" + std::to_string(b.second) +
                            "): set data.image_size to train on them");
  }
}

}  // namespace

Result<std::shared_ptr<Dataset>> openImageFolder(const std::string& dir, const std::string& split,
                                                 const std::string& name) {
  const fs::path root(dir);
  if (!isDir(root))
    return makeError(Errc::Data, name + ": " + dir + " is not a directory; " + folderLayout(dir));
  fs::path splitDir;
  if (isDir(root / "train")) {
    if (split == "train") splitDir = root / "train";
    else if (isDir(root / "test")) splitDir = root / "test";
    else if (isDir(root / "val")) splitDir = root / "val";
    else
      return makeError(Errc::Data, name + ": " + dir + "/train has no test/ or val/ folder beside it; add one, or set "
                                          "data.val_fraction > 0 to hold out part of train");
  } else if (split == "train") {
    splitDir = root;
  } else {
    return makeError(Errc::Data, name + ": " + dir + " is a single split (no train/ and test/ folders); set "
                                        "data.val_fraction > 0 to hold out part of it for validation");
  }

  DatasetInfo info;
  info.name = name;
  info.split = split;
  auto listed = classFolders(splitDir, info);
  if (!listed.ok()) return listed.error();
  const std::vector<fs::path>& classDirs = *listed;
  if (classDirs.empty())
    return makeError(Errc::Data, name + ": " + splitDir.string() + " has no class folders; " + folderLayout(dir));

  std::vector<std::string> files;
  std::vector<int64_t> labels;
  for (size_t label = 0; label < classDirs.size(); ++label) {
    auto found = classImages(classDirs[label], info);
    if (!found.ok()) return found.error();
    if (found->empty())
      warnAbout(info, "class folder " + classDirs[label].string() + " has no JPEG/PNG images (kept as label " +
                          std::to_string(label) + " with 0 samples: add images to it, or remove it)");
    info.class_names.push_back(classDirs[label].filename().string());
    info.class_counts.push_back(static_cast<int64_t>(found->size()));
    for (auto& f : *found) {
      files.push_back(std::move(f));
      labels.push_back(static_cast<int64_t>(label));
    }
  }
  if (files.empty())
    return makeError(Errc::Data, name + ": no JPEG/PNG images under " + splitDir.string() + "; " + folderLayout(dir));
  info.num_classes = static_cast<int>(info.class_names.size());
  info.size = static_cast<int64_t>(files.size());
  estimateStatistics(files, info);
  return std::shared_ptr<Dataset>(std::make_shared<ImageFolderDataset>(std::move(info), std::move(files),
                                                                       std::move(labels)));
}

}  // namespace detail

// ---- export ------------------------------------------------------------------------------------

namespace {

std::string classFolderName(int64_t label, int num_classes, const std::string& name) {
  const int width = static_cast<int>(std::to_string(std::max(num_classes - 1, 0)).size());
  std::string prefix = std::to_string(label);
  prefix.insert(0, static_cast<size_t>(std::max(0, width - static_cast<int>(prefix.size()))), '0');
  std::string clean;
  for (char ch : name) clean += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_') ? ch : '_';
  return clean.empty() ? prefix : prefix + "_" + clean;
}

// Temp file + rename: an interrupted export never leaves a half image under its final name. No
// fsync per file: an export is re-runnable, and 70,000 fsyncs would dominate its time.
Status writeAtomicNoSync(const fs::path& path, const std::vector<unsigned char>& bytes) {
  const fs::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())) ||
        !out.flush()) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return makeError(Errc::Io, "cannot write " + tmp.string() + " (disk full or no permission?)");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return makeError(Errc::Io, "cannot rename " + tmp.string() + " to " + path.string() + " (" + ec.message() + ")");
  }
  return {};
}

}  // namespace

Status exportImageFolder(const Dataset& dataset, const std::string& dir, const std::string& format, int size,
                         const std::function<void(int64_t, int64_t)>& progress) {
  if (format != "png" && format != "jpg")
    return makeError(Errc::InvalidConfig, "--format: '" + format + "' — must be png or jpg");
  if (size < 0) return makeError(Errc::InvalidConfig, "--size: " + std::to_string(size) + " — must be >= 0");
  const DatasetInfo& info = dataset.info();
  const fs::path base = fs::path(dir) / (info.split.empty() ? "train" : info.split);
  std::vector<fs::path> classDirs;
  std::error_code ec;
  for (int c = 0; c < info.num_classes; ++c) {
    const std::string cname = c < static_cast<int>(info.class_names.size()) ? info.class_names[c] : std::to_string(c);
    classDirs.push_back(base / classFolderName(c, info.num_classes, cname));
    fs::create_directories(classDirs.back(), ec);
    if (ec) return makeError(Errc::Io, "cannot create " + classDirs.back().string() + " (" + ec.message() + ")");
  }
  const int64_t n = dataset.size();
  const int digits = static_cast<int>(std::to_string(std::max<int64_t>(n - 1, 0)).size());
  const std::vector<int> params =
      format == "jpg" ? std::vector<int>{cv::IMWRITE_JPEG_QUALITY, 95} : std::vector<int>{cv::IMWRITE_PNG_COMPRESSION, 3};
  int64_t skipped = 0;
  std::string firstBad;
  const int64_t every = std::max<int64_t>(1, n / 100);
  for (int64_t i = 0; i < n; ++i) {
    Sample s;
    try {
      s = dataset.get(i);
    } catch (const SampleError& e) {
      if (skipped++ == 0) firstBad = e.what();
      continue;
    }
    if (s.label < 0 || s.label >= info.num_classes)
      return makeError(Errc::Data, dataset.describe(i) + ": label " + std::to_string(s.label) + " outside 0.." +
                                       std::to_string(info.num_classes - 1));
    cv::Mat mat = detail::chwToMat(s.image);
    if (size > 0) mat = detail::resizeTo(mat, size, size);
    if (mat.channels() == 3) cv::cvtColor(mat, mat, cv::COLOR_RGB2BGR);
    std::vector<unsigned char> bytes;
    if (!cv::imencode("." + format, mat, bytes, params))
      return makeError(Errc::Internal, "cannot encode " + dataset.describe(i) + " as " + format);
    std::string file = std::to_string(i);
    file.insert(0, static_cast<size_t>(std::max(0, digits - static_cast<int>(file.size()))), '0');
    auto st = writeAtomicNoSync(classDirs[static_cast<size_t>(s.label)] / (file + "." + format), bytes);
    if (!st.ok()) return st;
    if (progress && ((i + 1) % every == 0 || i + 1 == n)) progress(i + 1, n);
  }
  if (skipped > 0)
    return makeError(Errc::Data, std::to_string(skipped) + " of " + std::to_string(n) +
                                     " samples could not be read and were not exported (first: " + firstBad + ")");
  return {};
}

}  // namespace wb::data
