#pragma once
// Private to wb_data: OpenCV <-> tensor conversions and image decoding, shared by the transforms,
// the ImageFolder reader and the exporter. Images are RGB (or gray) in tensors and in cv::Mat;
// only file encode/decode sees OpenCV's BGR order.
#include <optional>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <torch/torch.h>

namespace wb::data::detail {

// uint8 CHW tensor (C = 1 or 3) -> HWC cv::Mat of its own (CV_8UC1 / CV_8UC3, RGB order).
cv::Mat chwToMat(const torch::Tensor& chw);

// HWC uint8 cv::Mat (1 or 3 channels, RGB order) -> contiguous uint8 CHW tensor of its own.
torch::Tensor matToChw(const cv::Mat& mat);

// Resizes to width x height: INTER_AREA when shrinking (no aliasing), INTER_LINEAR otherwise.
cv::Mat resizeTo(const cv::Mat& mat, int width, int height);

// Why an encoded image is cut short, or nullopt: a JPEG must end with its EOI marker (FF D9;
// trailing zero padding allowed), a PNG with its IEND chunk. Other formats are not judged.
// Needed because libjpeg decodes a truncated JPEG into a half-grey image, only printing
// "Premature end of JPEG file" to stderr.
std::optional<std::string> truncationProblem(const std::vector<unsigned char>& bytes);

// Decodes an encoded JPEG/PNG file to 1 channel (gray) or 3 (RGB), 8 bits. Throws SampleError
// (index, path, reason) when the file cannot be read or decoded, or is truncated.
cv::Mat decodeImageFile(const std::string& path, int channels, int64_t index);

// Reads a whole file; throws SampleError when it cannot.
std::vector<unsigned char> readBytes(const std::string& path, int64_t index);

}  // namespace wb::data::detail
