// See image_codec.h. One of TRAINER_IMAGE_CODECS_OPENCV / _TURBOJPEG is defined by CMake.
// Tested by tests/data/test_image_codecs.cpp: write_image/read back JPEG+PNG, gray to BGR,
//   unsupported ext error, empty bytes decode error.
#include "data/image_codec.h"

#include <fmt/format.h>

#include <fstream>
#include <string_view>

#include "core/ascii_case.h"
#include "core/atomic_file.h"
#include "core/error.h"

#if defined(TRAINER_IMAGE_CODECS_TURBOJPEG)
#include "data/codecs/turbojpeg_codec.h"
#elif defined(TRAINER_IMAGE_CODECS_OPENCV)
#include <opencv2/imgcodecs.hpp>
#else
#error \
    "define TRAINER_IMAGE_CODECS_OPENCV or TRAINER_IMAGE_CODECS_TURBOJPEG (link trainer_image_codecs)"
#endif

namespace trainer::data {
namespace {

enum class Format { kJpeg, kPng, kOther };

Format sniff(const std::vector<uint8_t>& b) {
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return Format::kJpeg;
  if (b.size() >= 8 && b[0] == 0x89 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G') {
    return Format::kPng;
  }
  return Format::kOther;
}

std::string lower_extension(const std::filesystem::path& file) {
  return core::ascii_lowercase(file.extension().string());
}

}  // namespace

#if defined(TRAINER_IMAGE_CODECS_TURBOJPEG)

const char* image_codec_name() {
  return "turbojpeg";
}

cv::Mat decode_image_bgr(const std::vector<uint8_t>& bytes, std::string* error) {
  switch (sniff(bytes)) {
    case Format::kJpeg:
      return codecs::decode_jpeg_bgr(bytes.data(), bytes.size(), error);
    case Format::kPng:
      return codecs::decode_png_bgr(bytes.data(), bytes.size(), error);
    case Format::kOther:
      break;
  }
  *error =
      "not a JPEG or PNG: this build decodes only those (TRAINER_IMAGE_CODECS=turbojpeg); "
      "build with TRAINER_IMAGE_CODECS=opencv for BMP, TIFF and WebP";
  return {};
}

std::vector<uint8_t> encode_image(const std::string& ext, const cv::Mat& image, int quality,
                                  std::string* error) {
  if (ext == ".jpg" || ext == ".jpeg") return codecs::encode_jpeg(image, quality, error);
  if (ext == ".png") return codecs::encode_png(image, error);
  *error = "only .jpg and .png can be written by this build";
  return {};
}

#else  // TRAINER_IMAGE_CODECS_OPENCV

const char* image_codec_name() {
  return "opencv";
}

cv::Mat decode_image_bgr(const std::vector<uint8_t>& bytes, std::string* error) {
  cv::Mat image;
  try {
    if (!bytes.empty()) image = cv::imdecode(bytes, cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {  // e.g. a header over OpenCV's pixel limit
    *error = "the decoder refused it: " + e.msg;
    return {};
  }
  if (image.empty()) {
    *error = sniff(bytes) == Format::kJpeg  ? "corrupt JPEG"
             : sniff(bytes) == Format::kPng ? "corrupt PNG"
                                            : "unknown format or corrupt file";
  }
  return image;
}

std::vector<uint8_t> encode_image(const std::string& ext, const cv::Mat& image, int quality,
                                  std::string* error) {
  std::vector<uint8_t> out;
  std::vector<int> params;
  if (ext == ".jpg" || ext == ".jpeg") params = {cv::IMWRITE_JPEG_QUALITY, quality};
  try {
    if (!cv::imencode(ext, image, out, params)) *error = "encoding failed";
  } catch (const cv::Exception& e) {
    *error = e.what();
    out.clear();
  }
  return out;
}

#endif

bool read_file_bytes(const std::filesystem::path& file, std::vector<uint8_t>* bytes) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return false;
  const std::streamsize size = in.tellg();
  if (size < 0) return false;
  bytes->resize(static_cast<size_t>(size));
  in.seekg(0);
  return static_cast<bool>(in.read(reinterpret_cast<char*>(bytes->data()), size));
}

void write_image(const std::filesystem::path& file, const cv::Mat& image, int jpeg_quality) {
  std::string error;
  const auto bytes = encode_image(lower_extension(file), image, jpeg_quality, &error);
  if (bytes.empty()) {
    throw core::InputError(fmt::format("{}: cannot write image: {}", file.string(), error));
  }
  // Renamed into place: a full disk fails the write (std::runtime_error, the machine's problem)
  // and leaves no truncated image under the name.
  core::write_file_atomically(
      file, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
      core::Durability::kRenamed);
}

}  // namespace trainer::data
