#include "zip_check.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>

namespace wb::train::detail {
namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64End = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kNeedsZip64 = 0xFFFFFFFF;

// Bounds-checked little-endian reads; a read past the end sets `bad`.
struct View {
  const std::string& b;
  bool bad = false;

  uint64_t le(uint64_t at, int n) {
    if (at > b.size() || b.size() - at < static_cast<uint64_t>(n)) {
      bad = true;
      return 0;
    }
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
    return v;
  }
  uint32_t u16(uint64_t at) { return static_cast<uint32_t>(le(at, 2)); }
  uint32_t u32(uint64_t at) { return static_cast<uint32_t>(le(at, 4)); }
  uint64_t u64(uint64_t at) { return le(at, 8); }
};

uint32_t crcOf(const char* data, uint64_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {
    const auto n = static_cast<uInt>(std::min<uint64_t>(size, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), n);
    data += n;
    size -= n;
  }
  return static_cast<uint32_t>(crc);
}

struct Directory {
  uint64_t entries = 0, offset = 0;
};

std::optional<Directory> findDirectory(View& v) {
  const uint64_t size = v.b.size();
  if (size < 22) return std::nullopt;
  const uint64_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  for (uint64_t at = size - 22;; --at) {
    if (v.u32(at) == kEndOfDirectory) {
      Directory d{v.u16(at + 10), v.u32(at + 16)};
      if (at >= 20 && v.u32(at - 20) == kZip64Locator) {
        const uint64_t end64 = v.u64(at - 20 + 8);
        if (v.u32(end64) != kZip64End) return std::nullopt;
        d = {v.u64(end64 + 32), v.u64(end64 + 48)};
      }
      return v.bad ? std::nullopt : std::optional<Directory>(d);
    }
    if (at == lowest) return std::nullopt;
  }
}

// Sizes and offset too large for 32 bits sit in the zip64 extra field (id 1), in this order.
void readZip64Extra(View& v, uint64_t extra, uint32_t length, uint64_t& uncompressed, uint64_t& compressed,
                    uint64_t& local) {
  for (uint64_t p = extra; p + 4 <= extra + length;) {
    const uint32_t id = v.u16(p), n = v.u16(p + 2);
    if (id == 1) {
      uint64_t q = p + 4;
      for (uint64_t* field : {&uncompressed, &compressed, &local}) {
        if (*field != kNeedsZip64) continue;
        *field = v.u64(q);
        q += 8;
      }
      return;
    }
    p += 4 + n;
    if (v.bad) return;
  }
}

}  // namespace

std::optional<std::string> zipIntegrityProblem(const std::string& bytes) {
  View v{bytes};
  const auto dir = findDirectory(v);
  if (!dir) return "has no readable zip directory at its end";
  uint64_t at = dir->offset;
  for (uint64_t i = 0; i < dir->entries; ++i) {
    if (v.u32(at) != kDirectoryEntry) return "has a broken zip directory (entry " + std::to_string(i) + ")";
    const uint32_t method = v.u16(at + 10), crc = v.u32(at + 16);
    uint64_t compressed = v.u32(at + 20), uncompressed = v.u32(at + 24), local = v.u32(at + 42);
    const uint32_t nameLen = v.u16(at + 28), extraLen = v.u16(at + 30), commentLen = v.u16(at + 32);
    if (v.bad) return "has a broken zip directory (entry " + std::to_string(i) + ")";
    const std::string name = bytes.substr(at + 46, nameLen);
    readZip64Extra(v, at + 46 + nameLen, extraLen, uncompressed, compressed, local);
    if (v.u32(local) != kLocalHeader || v.bad) return "entry '" + name + "' points outside the file";
    const uint64_t data = local + 30 + v.u16(local + 26) + v.u16(local + 28);
    if (v.bad || data > bytes.size() || bytes.size() - data < compressed)
      return "entry '" + name + "' runs past the end of the file";
    if (method == 0 && crcOf(bytes.data() + data, compressed) != crc)
      return "entry '" + name + "' fails its CRC-32 check (flipped bytes?)";
    at += 46 + nameLen + extraLen + commentLen;
  }
  return std::nullopt;
}

}  // namespace wb::train::detail
