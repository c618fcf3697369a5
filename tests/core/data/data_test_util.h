#pragma once
// Helpers shared by the data tests: write real IDX / CIFAR / image files, and a generated dataset
// with per-index pixels that can be told to fail on chosen samples.
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>

#include "wb/data/dataset.h"

namespace datatest {

inline void putBigEndian(std::string& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xFF));
}

// An IDX file of unsigned bytes: magic 0x0000080<ndims>, dims, data.
inline std::string idxBytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::string out;
  putBigEndian(out, 0x800u | static_cast<uint32_t>(dims.size()));
  for (uint32_t d : dims) putBigEndian(out, d);
  out.append(reinterpret_cast<const char*>(data.data()), data.size());
  return out;
}

inline void writeFile(const std::string& path, const std::string& bytes, bool gz = false) {
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb");
    if (!f || gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) != static_cast<int>(bytes.size()))
      throw std::runtime_error("cannot write " + path);
    gzclose(f);
    return;
  }
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

// Pixel of image i at (y, x): a pattern that differs per image, row and column.
inline uint8_t pixel(int64_t i, int64_t c, int64_t y, int64_t x) {
  return static_cast<uint8_t>((i * 37 + c * 101 + y * 7 + x * 3) % 256);
}

// Writes <dir>/<stem>-images-idx3-ubyte[.gz] and labels with n images of h x w; label = i % 10.
inline void writeMnistLike(const std::string& dir, const std::string& stem, int n, int h, int w, bool gz) {
  std::vector<uint8_t> img, lab;
  for (int i = 0; i < n; ++i) {
    lab.push_back(static_cast<uint8_t>(i % 10));
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) img.push_back(pixel(i, 0, y, x));
  }
  const std::string ext = gz ? ".gz" : "";
  writeFile(dir + "/" + stem + "-images-idx3-ubyte" + ext,
            idxBytes({uint32_t(n), uint32_t(h), uint32_t(w)}, img), gz);
  writeFile(dir + "/" + stem + "-labels-idx1-ubyte" + ext, idxBytes({uint32_t(n)}, lab), gz);
}

// A PNG (lossless) of h x w with `channels` 1 or 3 (RGB), pixels from pixel(seed, ...).
inline void writePng(const std::string& path, int64_t seed, int h, int w, int channels) {
  cv::Mat m(h, w, channels == 1 ? CV_8UC1 : CV_8UC3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c)  // channel c is R, G, B; OpenCV stores B, G, R
        m.ptr<uint8_t>(y)[x * channels + (channels - 1 - c)] = pixel(seed, c, y, x);
  if (!cv::imwrite(path, m)) throw std::runtime_error("cannot write " + path);
}

// Pixels generated from the index (not in memory: takes the per-sample decode path). Samples in
// `bad` throw SampleError, samples in `fatal` throw std::runtime_error.
class GeneratedDataset : public wb::data::Dataset {
 public:
  GeneratedDataset(int64_t n, int channels, int h, int w, std::set<int64_t> bad = {}, std::set<int64_t> fatal = {})
      : bad_(std::move(bad)), fatal_(std::move(fatal)) {
    info_.name = "generated";
    info_.split = "train";
    info_.size = n;
    info_.channels = channels;
    info_.height = h;
    info_.width = w;
    info_.num_classes = 3;
    info_.class_names = {"a", "b", "c"};
    info_.class_counts = {0, 0, 0};
    for (int64_t i = 0; i < n; ++i) ++info_.class_counts[i % 3];
    info_.mean = std::vector<double>(channels, 0.5);
    info_.stddev = std::vector<double>(channels, 0.25);
  }
  const wb::data::DatasetInfo& info() const override { return info_; }
  wb::data::Sample get(int64_t i) const override {
    if (bad_.count(i)) throw wb::data::SampleError(i, describe(i), "cannot decode (test)");
    if (fatal_.count(i)) throw std::runtime_error("generated failure");
    auto t = torch::empty({info_.channels, info_.height, info_.width}, torch::kUInt8);
    auto a = t.accessor<uint8_t, 3>();
    for (int c = 0; c < info_.channels; ++c)
      for (int y = 0; y < info_.height; ++y)
        for (int x = 0; x < info_.width; ++x) a[c][y][x] = pixel(i, c, y, x);
    return {t, i % 3};
  }
  std::string describe(int64_t i) const override { return "/generated/sample-" + std::to_string(i) + ".png"; }

 private:
  wb::data::DatasetInfo info_;
  std::set<int64_t> bad_, fatal_;
};

}  // namespace datatest
