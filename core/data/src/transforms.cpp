// Per-sample image ops (OpenCV resize, raw-loop crop/flip on uint8) and the batched channel
// conversion + normalisation. All run in the loader threads.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "image_ops.h"
#include "internal.h"

namespace wb::data::detail {

// ---- OpenCV helpers ----------------------------------------------------------------------------

cv::Mat chwToMat(const torch::Tensor& chw) {
  auto t = chw.size(0) == 1 ? chw.contiguous() : chw.permute({1, 2, 0}).contiguous();
  const int h = static_cast<int>(chw.size(1)), w = static_cast<int>(chw.size(2));
  const int type = chw.size(0) == 1 ? CV_8UC1 : CV_8UC3;
  return cv::Mat(h, w, type, t.data_ptr<uint8_t>()).clone();
}

torch::Tensor matToChw(const cv::Mat& mat) {
  cv::Mat m = mat.isContinuous() ? mat : mat.clone();
  const int64_t c = m.channels();
  auto hwc = torch::from_blob(m.data, {m.rows, m.cols, c}, torch::kUInt8);
  return c == 1 ? hwc.permute({2, 0, 1}).clone() : hwc.permute({2, 0, 1}).contiguous();
}

cv::Mat resizeTo(const cv::Mat& mat, int width, int height) {
  if (mat.cols == width && mat.rows == height) return mat;
  cv::Mat out;
  const bool shrink = width < mat.cols && height < mat.rows;
  cv::resize(mat, out, cv::Size(width, height), 0, 0, shrink ? cv::INTER_AREA : cv::INTER_LINEAR);
  return out;
}

std::vector<unsigned char> readBytes(const std::string& path, int64_t index) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw SampleError(index, path, std::string("cannot open (") + std::strerror(errno) + ")");
  const auto size = static_cast<std::streamoff>(in.tellg());
  std::vector<unsigned char> bytes(static_cast<size_t>(std::max<std::streamoff>(size, 0)));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), size)) throw SampleError(index, path, "read failed");
  return bytes;
}

namespace {
bool startsWith(const std::vector<unsigned char>& bytes, std::initializer_list<unsigned char> prefix) {
  return bytes.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), bytes.begin());
}
bool endsWith(const std::vector<unsigned char>& bytes, size_t end, std::initializer_list<unsigned char> suffix) {
  return end >= suffix.size() && std::equal(suffix.begin(), suffix.end(), bytes.begin() + (end - suffix.size()));
}
}  // namespace

std::optional<std::string> truncationProblem(const std::vector<unsigned char>& bytes) {
  size_t end = bytes.size();
  while (end > 0 && bytes[end - 1] == 0) --end;  // zero padding after the last marker
  if (startsWith(bytes, {0xFF, 0xD8, 0xFF}) && !endsWith(bytes, end, {0xFF, 0xD9}))
    return "truncated JPEG (no end-of-image marker FF D9 at the end of the file)";
  if (startsWith(bytes, {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}) &&
      !endsWith(bytes, end, {'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82}))
    return "truncated PNG (no IEND chunk at the end of the file)";
  return std::nullopt;
}

cv::Mat decodeImageFile(const std::string& path, int channels, int64_t index) {
  const auto bytes = readBytes(path, index);
  if (auto problem = truncationProblem(bytes))
    throw SampleError(index, path, "cannot decode: " + *problem + "; re-copy or delete the file");
  cv::Mat img;
  try {
    if (!bytes.empty()) img = cv::imdecode(bytes, channels == 1 ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {
    throw SampleError(index, path, std::string("cannot decode: ") + e.what());
  }
  if (img.empty())
    throw SampleError(index, path, "cannot decode: not a valid JPEG/PNG image (corrupt or truncated file)");
  if (img.channels() == 3) cv::cvtColor(img, img, cv::COLOR_BGR2RGB);
  return img;
}

// ---- per-sample ops ----------------------------------------------------------------------------

bool hasRandomOps(const TransformOptions& t) {
  return t.augment && (t.crop_padding > 0 || t.hflip || (t.random_resized_crop && t.image_size > 0));
}

namespace {

// torchvision's RandomResizedCrop box: scale (0.08, 1), ratio (3/4, 4/3), 10 tries, then a
// centre crop clamped to the ratio range.
cv::Rect randomResizedBox(int height, int width, Rng& rng) {
  const double area = static_cast<double>(height) * width;
  const double logLo = std::log(3.0 / 4.0), logHi = std::log(4.0 / 3.0);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * rng.uniform(0.08, 1.0);
    const double ratio = std::exp(rng.uniform(logLo, logHi));
    const int w = static_cast<int>(std::lround(std::sqrt(target * ratio)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / ratio)));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const int y = static_cast<int>(rng.below(height - h + 1));
      const int x = static_cast<int>(rng.below(width - w + 1));
      return {x, y, w, h};
    }
  }
  const double inRatio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (inRatio < 3.0 / 4.0) h = static_cast<int>(std::lround(w / (3.0 / 4.0)));
  else if (inRatio > 4.0 / 3.0) w = static_cast<int>(std::lround(h * (4.0 / 3.0)));
  h = std::min(h, height);
  w = std::min(w, width);
  return {(width - w) / 2, (height - h) / 2, w, h};
}

}  // namespace

torch::Tensor resizeStage(const torch::Tensor& chw, const TransformOptions& t, Rng& rng) {
  const int s = t.image_size;
  if (s <= 0) return chw;
  const bool rrc = t.augment && t.random_resized_crop;
  if (!rrc && chw.size(1) == s && chw.size(2) == s) return chw;
  cv::Mat mat = chwToMat(chw);
  if (rrc) mat = mat(randomResizedBox(mat.rows, mat.cols, rng));
  return matToChw(resizeTo(mat, s, s));
}

void cropFlipInPlace(uint8_t* chw, int64_t channels, int64_t height, int64_t width, const TransformOptions& t,
                     Rng& rng) {
  if (!t.augment) return;
  const int64_t pad = t.crop_padding;
  int64_t dy = 0, dx = 0;
  if (pad > 0) {  // draw order is part of the contract: crop offsets, then flip
    dy = rng.below(2 * pad + 1) - pad;
    dx = rng.below(2 * pad + 1) - pad;
  }
  const bool flip = t.hflip && rng.uniform() < 0.5;
  if (dy == 0 && dx == 0 && !flip) return;
  std::vector<uint8_t> src(static_cast<size_t>(height * width));
  for (int64_t c = 0; c < channels; ++c) {
    uint8_t* plane = chw + c * height * width;
    std::memcpy(src.data(), plane, src.size());
    for (int64_t y = 0; y < height; ++y) {
      uint8_t* row = plane + y * width;
      const int64_t sy = y + dy;
      for (int64_t x = 0; x < width; ++x) {
        const int64_t cx = flip ? width - 1 - x : x;  // flip applies to the cropped image
        const int64_t sx = cx + dx;
        row[x] = (sy >= 0 && sy < height && sx >= 0 && sx < width) ? src[sy * width + sx] : 0;
      }
    }
  }
}

// ---- batch ops ---------------------------------------------------------------------------------

torch::Tensor convertChannels(const torch::Tensor& images, int target) {
  const int64_t c = images.size(1);
  if (target == 0 || target == c) return images;
  if (c == 1 && target == 3) return images.expand({images.size(0), 3, images.size(2), images.size(3)}).contiguous();
  if (c == 3 && target == 1) {
    // ITU-R 601 luma in integers: the same bytes whatever the thread or library version.
    auto i = images.to(torch::kInt);
    auto y = (i.select(1, 0) * 299 + i.select(1, 1) * 587 + i.select(1, 2) * 114 + 500).div(1000, "floor");
    return y.to(torch::kUInt8).unsqueeze(1).contiguous();
  }
  throw DataError("", "cannot convert images with " + std::to_string(c) + " channels to " + std::to_string(target) +
                          " (only 1 <-> 3)");
}

namespace {

std::vector<double> constantsFor(const std::vector<double>& v, int channels, double fallback) {
  if (static_cast<int>(v.size()) == channels) return v;
  if (v.size() == 1) return std::vector<double>(static_cast<size_t>(channels), v[0]);
  if (v.size() == 3 && channels == 1) return {0.299 * v[0] + 0.587 * v[1] + 0.114 * v[2]};
  return std::vector<double>(static_cast<size_t>(channels), fallback);
}

}  // namespace

std::vector<float> normalisationTable(const DatasetInfo& info, int out_channels, bool normalize) {
  const auto mean = constantsFor(info.mean, out_channels, 0.0);
  const auto stddev = constantsFor(info.stddev, out_channels, 1.0);
  std::vector<float> table(static_cast<size_t>(out_channels) * 256);
  for (int c = 0; c < out_channels; ++c)
    for (int v = 0; v < 256; ++v) {
      const double x = v / 255.0;
      const double s = stddev[c] > 0 ? stddev[c] : 1.0;
      table[c * 256 + v] = static_cast<float>(normalize ? (x - mean[c]) / s : x);
    }
  return table;
}

torch::Tensor toFloat(const torch::Tensor& images, const std::vector<float>& table, bool pinned) {
  auto u8 = images.contiguous();
  auto opts = torch::TensorOptions().dtype(torch::kFloat);
  if (pinned) opts = opts.pinned_memory(true);
  auto out = torch::empty(u8.sizes(), opts);
  const int64_t b = u8.size(0), c = u8.size(1), plane = u8.size(2) * u8.size(3);
  if (static_cast<int64_t>(table.size()) < c * 256) throw std::logic_error("toFloat: table has too few channels");
  const uint8_t* in = u8.data_ptr<uint8_t>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < b; ++i)
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* lut = table.data() + ch * 256;
      for (int64_t k = 0; k < plane; ++k) *o++ = lut[*in++];
    }
  return out;
}

}  // namespace wb::data::detail
