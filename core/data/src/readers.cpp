// IDX (MNIST / Fashion-MNIST) and CIFAR-10 binary readers. Both load a whole split into one
// uint8 tensor: a split is at most ~150 MB, and a batch then costs one index_select.
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "internal.h"
#include "wb/common/paths.h"

namespace fs = std::filesystem;

namespace wb::data::detail {

// ---- shared helpers ----------------------------------------------------------------------------

std::vector<int64_t> permutation(int64_t n, Rng rng) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[rng.below(i + 1)]);
  return p;
}

std::vector<int64_t> classCounts(const torch::Tensor& labels, int num_classes) {
  std::vector<int64_t> counts(static_cast<size_t>(num_classes), 0);
  auto l = labels.to(torch::kLong).contiguous();
  const int64_t* p = l.data_ptr<int64_t>();
  for (int64_t i = 0; i < l.numel(); ++i) {
    if (p[i] < 0 || p[i] >= num_classes)
      throw std::logic_error("label " + std::to_string(p[i]) + " outside [0, " + std::to_string(num_classes) + ")");
    ++counts[static_cast<size_t>(p[i])];
  }
  return counts;
}

std::pair<std::vector<double>, std::vector<double>> channelStats(const torch::Tensor& images) {
  // A histogram per channel gives exact mean and variance with one pass over bytes.
  auto img = images.contiguous();
  const int64_t n = img.size(0), c = img.size(1), plane = img.size(2) * img.size(3);
  std::vector<std::array<int64_t, 256>> hist(static_cast<size_t>(c));
  for (auto& h : hist) h.fill(0);
  const uint8_t* p = img.data_ptr<uint8_t>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch, p += plane)
      for (int64_t k = 0; k < plane; ++k) ++hist[ch][p[k]];
  std::vector<double> mean, stddev;
  for (const auto& h : hist) {
    double count = 0, sum = 0, sq = 0;
    for (int v = 0; v < 256; ++v) {
      const double x = v / 255.0;
      count += h[v];
      sum += h[v] * x;
      sq += h[v] * x * x;
    }
    const double m = count > 0 ? sum / count : 0.0;
    const double var = count > 0 ? std::max(0.0, sq / count - m * m) : 0.0;
    mean.push_back(m);
    stddev.push_back(var > 0 ? std::sqrt(var) : 1.0);
  }
  return {mean, stddev};
}

InMemoryDataset::InMemoryDataset(DatasetInfo info, torch::Tensor images, torch::Tensor labels,
                                 std::vector<Source> sources)
    : info_(std::move(info)),
      images_(images.contiguous()),
      labels_(labels.to(torch::kLong).contiguous()),
      labelPtr_(labels_.data_ptr<int64_t>()),
      sources_(std::move(sources)) {
  info_.size = images_.size(0);
  info_.channels = static_cast<int>(images_.size(1));
  info_.height = static_cast<int>(images_.size(2));
  info_.width = static_cast<int>(images_.size(3));
  info_.class_counts = classCounts(labels_, info_.num_classes);
}

Sample InMemoryDataset::get(int64_t index) const { return {images_[index], labelPtr_[index]}; }

int64_t InMemoryDataset::label(int64_t index) const {
  if (index < 0 || index >= info_.size) throw std::out_of_range("sample index " + std::to_string(index));
  return labelPtr_[index];
}

std::string InMemoryDataset::describe(int64_t index) const {
  auto it = std::upper_bound(sources_.begin(), sources_.end(), index,
                             [](int64_t i, const Source& s) { return i < s.first; });
  if (it == sources_.begin()) return info_.name + "#" + std::to_string(index);
  --it;
  return it->path + "#" + std::to_string(index - it->first);
}

torch::Tensor gatherRows(const torch::Tensor& rows, const torch::Tensor& indices) {
  // A plain copy loop: it runs in loader threads, where ATen's index_select could fan out into
  // intra-op threads that compete with the training step.
  auto idx = indices.to(torch::kLong).contiguous();
  auto sizes = rows.sizes().vec();
  sizes[0] = idx.numel();
  auto out = torch::empty(sizes, rows.options());
  const int64_t n = rows.size(0);
  const auto bytes = static_cast<size_t>(rows.numel() > 0 ? rows.nbytes() / static_cast<size_t>(n) : 0);
  const auto* src = static_cast<const char*>(rows.data_ptr());
  auto* dst = static_cast<char*>(out.data_ptr());
  const int64_t* ip = idx.data_ptr<int64_t>();
  for (int64_t k = 0; k < idx.numel(); ++k) {
    if (ip[k] < 0 || ip[k] >= n) throw std::out_of_range("sample index " + std::to_string(ip[k]));
    std::memcpy(dst + k * bytes, src + ip[k] * bytes, bytes);
  }
  return out;
}

torch::Tensor InMemoryDataset::gatherImages(const torch::Tensor& indices) const { return gatherRows(images_, indices); }

torch::Tensor InMemoryDataset::gatherLabels(const torch::Tensor& indices) const { return gatherRows(labels_, indices); }

namespace {

Error dataError(const std::string& message) { return makeError(Errc::Data, message); }

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// ---- IDX ---------------------------------------------------------------------------------------

const std::vector<std::string> kFashionClasses = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                  "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

// Reads raw or gzip files alike (gzread passes uncompressed data through).
class GzFile {
 public:
  explicit GzFile(const std::string& path) : path_(path), f_(gzopen(path.c_str(), "rb")) {
    if (f_) gzbuffer(f_, 1 << 20);
  }
  ~GzFile() {
    if (f_) gzclose(f_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;
  bool isOpen() const { return f_ != nullptr; }
  // Reads up to n bytes; returns how many were read, or an error naming the file.
  Result<int64_t> read(void* dst, int64_t n) {
    auto* out = static_cast<char*>(dst);
    int64_t total = 0;
    while (total < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<int64_t>(n - total, 1 << 30));
      const int r = gzread(f_, out + total, chunk);
      if (r < 0) {
        int code = 0;
        const char* msg = gzerror(f_, &code);
        return dataError(path_ + ": cannot read (" + (msg ? msg : "zlib error") +
                         "): the file is corrupt; download it again");
      }
      if (r == 0) break;
      total += r;
    }
    return total;
  }

 private:
  std::string path_;
  gzFile f_;
};

struct IdxFile {
  std::string path;
  std::vector<int64_t> dims;
};

uint32_t bigEndian(const unsigned char* b) {
  return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | uint32_t(b[3]);
}

// Reads an IDX file of unsigned bytes with `ndims` dimensions into `out` (allocated here).
Result<IdxFile> readIdx(const std::string& path, int ndims, torch::Tensor& out) {
  GzFile f(path);
  if (!f.isOpen()) return dataError(path + ": cannot open (" + std::strerror(errno) + ")");
  unsigned char head[4];
  auto got = f.read(head, 4);
  if (!got.ok()) return got.error();
  const uint32_t expectMagic = 0x00000800u | static_cast<uint32_t>(ndims);
  if (*got < 4) return dataError(path + ": truncated: the file ends inside the 4-byte IDX magic number");
  const uint32_t magic = bigEndian(head);
  if (magic != expectMagic) {
    char buf[160];
    std::snprintf(buf, sizeof buf, ": wrong magic number 0x%08x (expected 0x%08x: IDX, unsigned bytes, %d dimension%s)",
                  magic, expectMagic, ndims, ndims == 1 ? "" : "s");
    return dataError(path + buf);
  }
  IdxFile file{path, {}};
  int64_t count = 1;
  for (int d = 0; d < ndims; ++d) {
    unsigned char b[4];
    auto r = f.read(b, 4);
    if (!r.ok()) return r.error();
    if (*r < 4) return dataError(path + ": truncated: the file ends inside the IDX header");
    file.dims.push_back(bigEndian(b));
    count *= file.dims.back();
  }
  out = torch::empty(file.dims, torch::kUInt8);
  auto r = f.read(out.data_ptr<uint8_t>(), count);
  if (!r.ok()) return r.error();
  if (*r < count)
    return dataError(path + ": truncated: the header promises " + std::to_string(count) + " data bytes but the file holds " +
                     std::to_string(*r) + "; download it again");
  unsigned char extra;
  auto e = f.read(&extra, 1);
  if (e.ok() && *e > 0)
    return dataError(path + ": holds more data than its header's " + std::to_string(file.dims[0]) +
                     " records: not a valid IDX file");
  return file;
}

// The cache keeps the copies read most recently (a read touches its copy), at most
// kUnpackedKept: the folders a user trains on, not every temporary folder a test made.
constexpr size_t kUnpackedKept = 16;

void pruneUnpacked(const fs::path& dir) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> copies;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file(ec) && e.path().filename().string().find(".tmp-") == std::string::npos)
      copies.emplace_back(e.last_write_time(ec), e.path());
  if (copies.size() <= kUnpackedKept) return;
  std::sort(copies.begin(), copies.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = kUnpackedKept; i < copies.size(); ++i) fs::remove(copies[i].second, ec);
}

// Writes the IDX file just read (its header and bytes) as an unpacked copy: to a file of this
// process's own, then renamed into place, so a reader never sees half of one. Best effort: where
// the cache cannot be written, runs read the .gz as before.
void keepUnpacked(const std::string& copy, const IdxFile& file, const torch::Tensor& data) {
  std::error_code ec;
  fs::create_directories(fs::path(copy).parent_path(), ec);
  const std::string tmp = copy + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    auto put = [&](uint32_t v) {
      const unsigned char b[4] = {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
      out.write(reinterpret_cast<const char*>(b), 4);
    };
    put(0x00000800u | static_cast<uint32_t>(file.dims.size()));
    for (int64_t d : file.dims) put(static_cast<uint32_t>(d));
    out.write(reinterpret_cast<const char*>(data.data_ptr<uint8_t>()), data.numel());
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, copy, ec);
  if (ec) fs::remove(tmp, ec);
  pruneUnpacked(fs::path(copy).parent_path());
}

// A .gz file is read with zlib once and kept unpacked (as torchvision keeps MNIST's raw files):
// every later process reads the plain copy, which for Fashion-MNIST's training images is most of
// a run's start (0.15 s or more of zlib a process). A copy that cannot be read is read past: the
// .gz is, and the copy written again. Errors name the .gz, the file the user gave.
Result<IdxFile> readIdxOnce(const std::string& path, int ndims, torch::Tensor& out) {
  const std::string copy = unpackedCopyOf(path);
  if (!copy.empty() && fs::exists(copy)) {
    auto fromCopy = readIdx(copy, ndims, out);
    if (fromCopy.ok()) {
      std::error_code ec;
      fs::last_write_time(copy, fs::file_time_type::clock::now(), ec);  // read most recently: kept
      fromCopy->path = path;
      return fromCopy;
    }
  }
  auto read = readIdx(path, ndims, out);
  if (read.ok() && !copy.empty()) keepUnpacked(copy, *read, out);
  return read;
}

// The first of <stem>-<kind>-ubyte, <stem>-<kind>.ubyte spellings that exists, raw or .gz.
std::string findIdx(const fs::path& dir, const std::string& stem, const std::string& kind) {
  for (const std::string& name : {stem + "-" + kind + "-ubyte", stem + "." + kind + "-ubyte"})
    for (const char* ext : {"", ".gz"})
      if (fs::exists(dir / (name + ext))) return (dir / (name + ext)).string();
  return {};
}

std::string idxLayout() {
  return "expected the MNIST layout: train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], "
         "t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz]";
}

// ---- CIFAR-10 ----------------------------------------------------------------------------------

const std::vector<std::string> kCifarClasses = {"airplane", "automobile", "bird",  "cat",  "deer",
                                                "dog",      "frog",       "horse", "ship", "truck"};
constexpr int64_t kCifarRecord = 1 + 3 * 32 * 32;

std::string cifarLayout() {
  return "expected the CIFAR-10 binary layout: data_batch_1.bin .. data_batch_5.bin, test_batch.bin, "
         "batches.meta.txt (optionally inside cifar-10-batches-bin/)";
}

Result<std::vector<std::string>> cifarClassNames(const fs::path& dir, std::vector<std::string>& problems) {
  const fs::path meta = dir / "batches.meta.txt";
  std::ifstream in(meta);
  if (!in) {
    problems.push_back(meta.string() + " is missing: using the standard CIFAR-10 class names");
    return kCifarClasses;
  }
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (!line.empty()) names.push_back(line);
  }
  if (names.size() != kCifarClasses.size())
    return dataError(meta.string() + ": lists " + std::to_string(names.size()) +
                     " class names; CIFAR-10 has 10 (one per line)");
  return names;
}

}  // namespace

std::string unpackedCopyOf(const std::string& gzPath) {
  const fs::path p(gzPath);
  if (p.extension() != ".gz") return {};
  std::error_code ec;
  const fs::path abs = fs::absolute(p, ec);
  const auto size = fs::file_size(p, ec);
  if (ec) return {};
  const auto stamp = fs::last_write_time(p, ec).time_since_epoch().count();
  if (ec) return {};
  const size_t key = std::hash<std::string>{}(abs.string() + "\n" + std::to_string(size) + "\n" + std::to_string(stamp));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016zx", key);
  return (unpackedDatasetDir() / (std::string(hex) + "-" + p.stem().string())).string();
}

Result<std::shared_ptr<Dataset>> openIdx(const std::string& dir, const std::string& split, const std::string& name) {
  const fs::path d(dir);
  if (!fs::is_directory(d)) return dataError(name + ": " + dir + " is not a directory; " + idxLayout());
  const std::string stem = split == "train" ? "train" : "t10k";
  const std::string imagesPath = findIdx(d, stem, "images-idx3");
  const std::string labelsPath = findIdx(d, stem, "labels-idx1");
  if (imagesPath.empty() || labelsPath.empty())
    return dataError(name + ": no " + stem + (imagesPath.empty() ? "-images-idx3-ubyte" : "-labels-idx1-ubyte") +
                     "[.gz] in " + dir + "; " + idxLayout());
  torch::Tensor images, labels;
  auto fi = readIdxOnce(imagesPath, 3, images);
  if (!fi.ok()) return fi.error();
  auto fl = readIdxOnce(labelsPath, 1, labels);
  if (!fl.ok()) return fl.error();
  if (fi->dims[0] != fl->dims[0])
    return dataError(imagesPath + " holds " + std::to_string(fi->dims[0]) + " images but " + labelsPath + " holds " +
                     std::to_string(fl->dims[0]) + " labels: the two files must come from the same set");

  DatasetInfo info;
  info.name = name;
  info.split = split;
  const std::string hint = lower(name + " " + dir);
  const int64_t maxLabel = labels.numel() ? labels.max().item<int64_t>() : 0;
  if (hint.find("fashion") != std::string::npos) {
    info.class_names = kFashionClasses;
    info.mean = {0.2860};
    info.stddev = {0.3530};
  } else {
    for (int64_t c = 0; c <= std::max<int64_t>(maxLabel, 9); ++c) info.class_names.push_back(std::to_string(c));
    if (hint.find("mnist") != std::string::npos) {
      info.mean = {0.1307};
      info.stddev = {0.3081};
    } else {
      std::tie(info.mean, info.stddev) = channelStats(images.unsqueeze(1));
    }
  }
  info.num_classes = static_cast<int>(info.class_names.size());
  if (maxLabel >= info.num_classes)
    return dataError(labelsPath + ": label " + std::to_string(maxLabel) + " is outside 0.." +
                     std::to_string(info.num_classes - 1) + " for " + name);
  return std::shared_ptr<Dataset>(std::make_shared<InMemoryDataset>(
      std::move(info), images.unsqueeze(1), labels, std::vector<InMemoryDataset::Source>{{0, imagesPath}}));
}

Result<std::shared_ptr<Dataset>> openCifar10(const std::string& dir, const std::string& split,
                                             const std::string& name) {
  fs::path d(dir);
  if (!fs::is_directory(d)) return dataError(name + ": " + dir + " is not a directory; " + cifarLayout());
  if (!fs::exists(d / "data_batch_1.bin") && !fs::exists(d / "test_batch.bin") &&
      fs::is_directory(d / "cifar-10-batches-bin"))
    d /= "cifar-10-batches-bin";
  std::vector<std::string> files;
  if (split == "train")
    for (int i = 1; i <= 5; ++i) files.push_back((d / ("data_batch_" + std::to_string(i) + ".bin")).string());
  else
    files.push_back((d / "test_batch.bin").string());

  DatasetInfo info;
  info.name = name;
  info.split = split;
  auto names = cifarClassNames(d, info.problems);
  if (!names.ok()) return names.error();
  info.class_names = *names;
  info.num_classes = 10;
  info.mean = {0.4914, 0.4822, 0.4465};
  info.stddev = {0.2470, 0.2435, 0.2616};

  int64_t total = 0;
  std::vector<int64_t> sizes;
  for (const auto& f : files) {
    std::error_code ec;
    const auto bytes = fs::file_size(f, ec);
    if (ec) return dataError(name + ": cannot read " + f + " (" + ec.message() + "); " + cifarLayout());
    if (bytes == 0 || bytes % kCifarRecord != 0)
      return dataError(f + ": size " + std::to_string(bytes) + " is not a multiple of " + std::to_string(kCifarRecord) +
                       " bytes (1 label + 3072 pixels per record): truncated or not a CIFAR-10 binary batch");
    sizes.push_back(static_cast<int64_t>(bytes) / kCifarRecord);
    total += sizes.back();
  }
  auto images = torch::empty({total, 3, 32, 32}, torch::kUInt8);
  auto labels = torch::empty({total}, torch::kLong);
  uint8_t* img = images.data_ptr<uint8_t>();
  int64_t* lab = labels.data_ptr<int64_t>();
  std::vector<InMemoryDataset::Source> sources;
  std::vector<char> record(kCifarRecord);
  int64_t n = 0;
  for (size_t k = 0; k < files.size(); ++k) {
    sources.push_back({n, files[k]});
    std::ifstream in(files[k], std::ios::binary);
    for (int64_t r = 0; r < sizes[k]; ++r, ++n) {
      if (!in.read(record.data(), kCifarRecord)) return dataError(files[k] + ": read failed at record " + std::to_string(r));
      const auto l = static_cast<unsigned char>(record[0]);
      if (l > 9)
        return dataError(files[k] + ": record " + std::to_string(r) + " has label " + std::to_string(l) +
                         " (CIFAR-10 labels are 0..9): not a CIFAR-10 binary batch");
      lab[n] = l;
      std::memcpy(img + n * (kCifarRecord - 1), record.data() + 1, kCifarRecord - 1);  // already CHW
    }
  }
  return std::shared_ptr<Dataset>(
      std::make_shared<InMemoryDataset>(std::move(info), images, labels, std::move(sources)));
}

}  // namespace wb::data::detail
