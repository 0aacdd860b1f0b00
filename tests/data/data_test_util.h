// Small helpers for the data tests: synthetic images and label files in a temp folder, and a
// log capture for checking that a problem is logged exactly once.
#pragma once

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <opencv2/core.hpp>

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include "data/augment/sample.h"
#include "data/image_codec.h"
#include "test_support.h"

namespace trainer::test {

// A deterministic colourful h x w image (so augmentations change pixels measurably).
inline cv::Mat pattern_image(int height, int width, int seed = 0) {
  cv::Mat im(height, width, CV_8UC3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      im.at<cv::Vec3b>(y, x) = cv::Vec3b(static_cast<uint8_t>((x * 7 + seed * 31) % 256),
                                         static_cast<uint8_t>((y * 5 + seed * 17) % 256),
                                         static_cast<uint8_t>((x + y + seed * 13) % 256));
    }
  }
  return im;
}

// An augmentation sample of h x w pixels of grey level v, without labels.
inline trainer::data::augment::Sample solid_sample(int h, int w, uint8_t v) {
  trainer::data::augment::Sample s;
  s.image = cv::Mat(h, w, CV_8UC3, cv::Scalar(v, v, v));
  return s;
}

inline void write_image(const std::filesystem::path& file, const cv::Mat& image) {
  std::filesystem::create_directories(file.parent_path());
  trainer::data::write_image(file, image);
}

// Routes the default logger into a string while alive.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() const { return stream_.str(); }
  int count(const std::string& needle) const {
    const std::string t = text();
    int n = 0;
    for (size_t at = t.find(needle); at != std::string::npos; at = t.find(needle, at + 1)) ++n;
    return n;
  }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace trainer::test
