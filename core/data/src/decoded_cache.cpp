#include "wb/data/decoded_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "wb/common/paths.h"
#include "wb/common/sysinfo.h"

namespace wb::data {
namespace fs = std::filesystem;

// The mapping: a header, one entry per sample, then the pixels one after another. The same bytes in
// memory and on disk; the atomics are lock-free, so processes sharing the file may use them.
struct DecodedCache::Layout {
  struct Header {
    char magic[8];
    uint32_t version;
    uint32_t reserved;
    int64_t count;
    int64_t capacity;
    std::atomic<int64_t> used;
    int64_t pad[3];
  };
  struct Entry {
    std::atomic<int32_t> state;  // 0 not cached, 1 cached
    int32_t c, h, w;
    int64_t offset;
  };
  static_assert(std::atomic<int64_t>::is_always_lock_free && std::atomic<int32_t>::is_always_lock_free);
  static_assert(sizeof(Header) == 64 && sizeof(Entry) == 24);
  static constexpr char kMagic[8] = {'W', 'B', 'D', 'E', 'C', 'O', 'D', '1'};
  static constexpr uint32_t kVersion = 1;

  static size_t dataAt(int64_t count) { return (sizeof(Header) + sizeof(Entry) * static_cast<size_t>(count) + 63) / 64 * 64; }
  static size_t total(int64_t count, int64_t capacity) { return dataAt(count) + static_cast<size_t>(capacity); }
  static Header& header(char* map) { return *reinterpret_cast<Header*>(map); }
  static Entry& entry(char* map, int64_t i) { return reinterpret_cast<Entry*>(map + sizeof(Header))[i]; }
};

namespace {

using Layout = DecodedCache::Layout;

std::string gib(int64_t bytes) {
  char buf[32];
  if (bytes >= (int64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / double(int64_t{1} << 30));
  else std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / double(1 << 20));
  return buf;
}

Error refused(const std::string& why) { return makeError(Errc::InvalidConfig, "speedups.decoded_cache: " + why); }

// FNV-1a over every sample's file, size and modification time: another key when any changes.
std::string contentKey(const Dataset& d) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](const void* p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ULL;
  };
  const DatasetInfo& info = d.info();
  mix(info.name.data(), info.name.size());
  mix(info.split.data(), info.split.size());
  for (int64_t i = 0; i < d.size(); ++i) {
    std::string path = d.describe(i);
    if (auto hash = path.find('#'); hash != std::string::npos) path.resize(hash);
    mix(path.data(), path.size() + 1);
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      const int64_t facts[3] = {static_cast<int64_t>(st.st_size), static_cast<int64_t>(st.st_mtim.tv_sec),
                                static_cast<int64_t>(st.st_mtim.tv_nsec)};
      mix(facts, sizeof facts);
    }
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

bool validHeader(char* map, int64_t count, int64_t capacity) {
  const Layout::Header& hd = Layout::header(map);
  return std::memcmp(hd.magic, Layout::kMagic, sizeof hd.magic) == 0 && hd.version == Layout::kVersion &&
         hd.count == count && hd.capacity == capacity;
}

// The other cache files of this dataset and split: files that changed since they were written.
void removeStale(const fs::path& dir, const std::string& prefix, const fs::path& keep) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && e.path().extension() == ".wbcache" && e.path() != keep) fs::remove(e.path(), ec);
  }
}

}  // namespace

int64_t estimateDecodedBytes(const Dataset& d) {
  const DatasetInfo& info = d.info();
  if (info.height > 0 && info.width > 0) return d.size() * info.channels * info.height * info.width;
  const int64_t n = d.size(), probes = std::min<int64_t>(32, n);
  int64_t sum = 0, seen = 0;
  for (int64_t k = 0; k < probes; ++k) {
    try {
      sum += d.get(k * n / probes).image.numel();
      ++seen;
    } catch (const SampleError&) {
    }
  }
  if (seen == 0) return 0;
  return n * (sum / seen) * 5 / 4 + (int64_t{1} << 20);
}

Result<std::shared_ptr<DecodedCache>> DecodedCache::open(std::shared_ptr<Dataset> base, const CacheOptions& options,
                                                         int64_t bytes) {
  std::shared_ptr<DecodedCache> cache(new DecodedCache(std::move(base)));
  cache->capacity_ = std::max<int64_t>(bytes, 64);
  Status st = options.mode == "disk" ? cache->mapFile(options.dir.empty() ? defaultCacheDir().string() : options.dir)
                                     : cache->mapMemory();
  if (!st) return st.error();
  return cache;
}

DecodedCache::~DecodedCache() {
  if (map_) ::munmap(map_, mappedBytes_);
  if (fd_ >= 0) ::close(fd_);
}

Status DecodedCache::mapMemory() {
  mappedBytes_ = Layout::total(size(), capacity_);
  void* p = ::mmap(nullptr, mappedBytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return refused("memory: cannot map " + gib(static_cast<int64_t>(mappedBytes_)) + ": " + std::strerror(errno));
  map_ = static_cast<char*>(p);
  return initialise(true);
}

// Opens (or makes) the file for this dataset's content; the first process sets it up under an
// exclusive flock, the others wait for it and map what it wrote.
Status DecodedCache::mapFile(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return refused("disk: cannot create the cache folder " + dir + " (" + ec.message() + "); set data.cache_dir");
  const std::string prefix = slugify(info().name) + "-" + info().split + "-";
  const fs::path path = fs::path(dir) / (prefix + contentKey(*base_) + ".wbcache");
  file_ = path.string();
  fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return refused("disk: cannot open " + file_ + " (" + std::strerror(errno) + "); set data.cache_dir to a writable folder");
  ::flock(fd_, LOCK_EX);
  mappedBytes_ = Layout::total(size(), capacity_);
  struct stat st {};
  ::fstat(fd_, &st);
  bool fresh = static_cast<size_t>(st.st_size) != mappedBytes_;
  if (fresh) {
    const auto space = fs::space(dir, ec);
    if (::ftruncate(fd_, 0) != 0 || ::posix_fallocate(fd_, 0, static_cast<off_t>(mappedBytes_)) != 0) {
      ::flock(fd_, LOCK_UN);
      fs::remove(path, ec);
      return refused("disk needs " + gib(static_cast<int64_t>(mappedBytes_)) + " for the " + std::to_string(size()) + " " +
                     info().split + " images of " + info().name + " in " + dir + ", which has " +
                     (ec ? std::string("too little") : gib(static_cast<int64_t>(space.available))) +
                     " free; set data.cache_dir to a folder with room, or turn the cache off");
    }
  }
  void* p = ::mmap(nullptr, mappedBytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) {
    ::flock(fd_, LOCK_UN);
    return refused("disk: cannot map " + file_ + ": " + std::strerror(errno));
  }
  map_ = static_cast<char*>(p);
  if (!fresh && !validHeader(map_, size(), capacity_)) fresh = true;  // another writer's, or damaged
  Status done = initialise(fresh);
  ::flock(fd_, LOCK_UN);
  removeStale(dir, prefix, path);
  return done;
}

Status DecodedCache::initialise(bool fresh) {
  Layout::Header& hd = Layout::header(map_);
  if (fresh) {
    std::memset(map_, 0, Layout::dataAt(size()));
    hd.version = Layout::kVersion;
    hd.count = size();
    hd.capacity = capacity_;
    hd.used.store(0);
    std::memcpy(hd.magic, Layout::kMagic, sizeof hd.magic);
  }
  for (int64_t i = 0; i < size(); ++i) cachedAtOpen_ += Layout::entry(map_, i).state.load() == 1;
  return {};
}

Sample DecodedCache::get(int64_t index) const {
  Layout::Entry& e = Layout::entry(map_, index);
  if (e.state.load(std::memory_order_acquire) == 1) {
    ++hits_;
    torch::Tensor image = torch::empty({e.c, e.h, e.w}, torch::kUInt8);
    std::memcpy(image.data_ptr<uint8_t>(), map_ + Layout::dataAt(size()) + e.offset, static_cast<size_t>(image.numel()));
    return {image, base_->label(index)};
  }
  Sample s = base_->get(index);  // an unreadable sample throws here, every time it is asked for
  ++decodes_;
  store(index, s.image);
  return s;
}

void DecodedCache::store(int64_t index, const torch::Tensor& image) const {
  const torch::Tensor pixels = image.contiguous();
  const int64_t n = pixels.numel();
  const int64_t at = Layout::header(map_).used.fetch_add(n);
  if (pixels.dim() != 3 || at + n > capacity_) {
    ++overflowed_;
    return;
  }
  std::memcpy(map_ + Layout::dataAt(size()) + at, pixels.data_ptr<uint8_t>(), static_cast<size_t>(n));
  Layout::Entry& e = Layout::entry(map_, index);
  e.c = static_cast<int32_t>(pixels.size(0));
  e.h = static_cast<int32_t>(pixels.size(1));
  e.w = static_cast<int32_t>(pixels.size(2));
  e.offset = at;
  e.state.store(1, std::memory_order_release);
}

// ---- the speedup -------------------------------------------------------------------------------

namespace {

Status checkMemory(int64_t need, const Splits& splits) {
  const int64_t available = memAvailableBytes();
  if (available <= 0 || need <= available * 4 / 5) return {};
  return refused("memory needs " + gib(need) + " for the " + std::to_string(splits.train->size()) + " train and " +
                 std::to_string(splits.val->size()) + " validation images of " + splits.train->info().name +
                 " decoded, more than 80 % of the " + gib(available) +
                 " this machine has available; use disk (a memory-mapped file in data.cache_dir), "
                 "fewer samples (data.limit_train), or turn it off");
}

}  // namespace

Result<CacheOutcome> cacheDecodedSamples(Splits& splits, const Config& config) {
  const std::string& mode = config.speedups.decoded_cache;
  if (mode == "off") return CacheOutcome{false, "off"};
  if (splits.train->inMemory())
    return CacheOutcome{false, splits.train->info().name + " is held decoded in memory already: nothing to cache"};
  const int64_t trainBytes = estimateDecodedBytes(*splits.train), valBytes = estimateDecodedBytes(*splits.val);
  if (mode == "memory")
    if (auto st = checkMemory(trainBytes + valBytes, splits); !st) return st.error();
  const CacheOptions options{mode, config.data.cache_dir};
  auto train = DecodedCache::open(splits.train, options, trainBytes);
  if (!train.ok()) return train.error();
  auto val = DecodedCache::open(splits.val, options, valBytes);
  if (!val.ok()) return val.error();
  std::string note = mode + ": " + gib(trainBytes + valBytes) + " set aside for " + std::to_string(splits.train->size()) +
                     " train and " + std::to_string(splits.val->size()) + " validation images";
  if (mode == "disk")
    note += " in " + (*train)->file() + " (" + std::to_string((*train)->cachedAtOpen() + (*val)->cachedAtOpen()) +
            " already decoded by an earlier run)";
  splits.train = *train;
  splits.val = *val;
  return CacheOutcome{true, note};
}

}  // namespace wb::data
