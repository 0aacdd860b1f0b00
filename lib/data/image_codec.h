// Image files in and out through one interface; the backend is chosen when the project is built.
//
// Why: every decode and encode (dataset images, previews, plots, the synthetic set) must go through
// one place so a build can swap OpenCV's imgcodecs for the light TurboJPEG + libpng pair the GPU
// bundle carries (TRAINER_IMAGE_CODECS=opencv|turbojpeg in CMake). Both give the pixels cv::imread
// gives with IMREAD_COLOR: 8-bit BGR, EXIF orientation applied, gray as 3 channels, alpha dropped.
// The turbojpeg build reads JPEG and PNG only and says so for anything else.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace trainer::data {

// OpenCV's default CV_IO_MAX_IMAGE_PIXELS: both backends refuse a header claiming more pixels
// before allocating anything (a 100k x 100k PNG header must not cost 30 GB).
inline constexpr int64_t kMaxImagePixels = int64_t{1} << 30;

// "opencv" or "turbojpeg".
const char* image_codec_name();

// A whole file in one read (sized from the file); false when it cannot be opened or read.
bool read_file_bytes(const std::filesystem::path& file, std::vector<uint8_t>* bytes);

// Decodes encoded bytes to HxWx3 uint8 BGR; an empty Mat with `error` set when it cannot.
cv::Mat decode_image_bgr(const std::vector<uint8_t>& bytes, std::string* error);

// Encodes an 8-bit gray or BGR image (PNG also BGRA) in memory as `ext` (".jpg", ".jpeg" with
// `quality`, ".png"); empty with `error` set when it cannot.
std::vector<uint8_t> encode_image(const std::string& ext, const cv::Mat& image, int quality,
                                  std::string* error);

// Encodes an 8-bit gray or BGR image (PNG also BGRA) as JPEG (.jpg/.jpeg, `jpeg_quality`) or PNG
// (.png) by the file's extension and writes it under a temporary name renamed into place
// (core/atomic_file.h, without the flushes). Throws core::InputError naming the file when the image
// cannot be encoded, std::runtime_error when it cannot be written (a full disk: no partial file).
void write_image(const std::filesystem::path& file, const cv::Mat& image, int jpeg_quality = 95);

}  // namespace trainer::data
