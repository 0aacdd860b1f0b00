// Image decoding and the long-side resize; see image_io.h.
// Tested by tests/data/test_dataset.cpp: gray/4-channel to BGR, corrupt vs missing file messages,
//   long-side resize rule.
#include "data/image_io.h"

#include <fmt/format.h>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "data/decode_budget.h"
#include "data/image_codec.h"
#include "data/stage_profile.h"

namespace trainer::data {
namespace {

std::vector<uint8_t> read_or_throw(const std::filesystem::path& file) {
  std::vector<uint8_t> bytes;
  bool read = false;
  {
    StageScope scope(Stage::kRead);
    read = read_file_bytes(file, &bytes);
  }
  if (!read) {
    throw core::InputError(fmt::format("{}: image not found or unreadable", file.string()));
  }
  return bytes;
}

// The caller holds the reservation.
cv::Mat decode_reserved_or_throw(const std::vector<uint8_t>& bytes,
                                 const std::filesystem::path& file) {
  std::string error;
  cv::Mat image;
  {
    StageScope scope(Stage::kDecode);
    image = decode_image_bgr(bytes, &error);
  }
  if (image.empty()) {
    throw core::InputError(fmt::format("{}: cannot decode image: {}", file.string(), error));
  }
  return image;
}

}  // namespace

cv::Mat read_image_bgr(const std::filesystem::path& file) {
  return decode_image_bgr_or_throw(read_or_throw(file), file);
}

cv::Mat decode_image_bgr_or_throw(const std::vector<uint8_t>& bytes,
                                  const std::filesystem::path& file) {
  const DecodeBudget::Grant grant =
      process_decode_budget().acquire(decode_reservation_bytes(bytes));
  return decode_reserved_or_throw(bytes, file);
}

cv::Mat read_resized_bgr(const std::filesystem::path& file, int imgsz) {
  return decode_resized_bgr_or_throw(read_or_throw(file), file, imgsz);
}

cv::Mat decode_resized_bgr_or_throw(const std::vector<uint8_t>& bytes,
                                    const std::filesystem::path& file, int imgsz) {
  const DecodeBudget::Grant grant =
      process_decode_budget().acquire(decode_reservation_bytes(bytes));
  // The full-size image, a temporary, is freed at the end of the statement, before the grant.
  return resize_long_side(decode_reserved_or_throw(bytes, file), imgsz);
}

cv::Size long_side_size(int height, int width, int imgsz) {
  const double r = static_cast<double>(imgsz) / std::max(height, width);
  if (r == 1.0) return cv::Size(width, height);
  return cv::Size(std::min(static_cast<int>(std::ceil(width * r)), imgsz),
                  std::min(static_cast<int>(std::ceil(height * r)), imgsz));
}

cv::Mat resize_long_side(const cv::Mat& image, int imgsz) {
  const cv::Size size = long_side_size(image.rows, image.cols, imgsz);
  if (size == image.size()) return image;
  StageScope scope(Stage::kResize);
  cv::Mat out;
  cv::resize(image, out, size, 0, 0, cv::INTER_LINEAR);
  return out;
}

}  // namespace trainer::data
