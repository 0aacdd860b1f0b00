// The RAM image cache (cache: ram): every image decoded and resized once, kept as uint8 BGR.
//
// Why: decoding JPEGs dominates a loader on few cores; with the cache an epoch only augments.
// Images are stored at the training size (long side = imgsz, INTER_LINEAR, see image_io.h), built
// in parallel with a progress line, after a memory check: the exact bytes needed (from the indexed
// sizes) plus a 10% margin must fit in MemAvailable, else the cache is skipped with a warning (the
// reference's check_cache_ram does the same with an estimate).
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <optional>
#include <vector>

#include "data/image_labels.h"

namespace trainer::data {

class ImageCache {
 public:
  // Returns nullopt (after a warning) when the images do not fit in memory. Throws
  // core::InputError naming a file that cannot be decoded.
  static std::optional<ImageCache> build(const DatasetIndex& dataset, int imgsz, int threads,
                                         bool show_progress = true);

  const cv::Mat& image(size_t index) const { return images_[index]; }
  size_t size() const { return images_.size(); }
  int imgsz() const { return imgsz_; }
  int64_t bytes() const { return bytes_; }

  // Bytes the cache would take for `dataset` at `imgsz`.
  static int64_t required_bytes(const DatasetIndex& dataset, int imgsz);

 private:
  std::vector<cv::Mat> images_;
  int imgsz_ = 0;
  int64_t bytes_ = 0;
};

// MemAvailable from /proc/meminfo in bytes (-1 when unknown).
int64_t available_memory_bytes();

}  // namespace trainer::data
