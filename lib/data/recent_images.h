// The last N decoded images, shared by the loader's workers.
//
// Why: a mosaic needs four images, and its three partners come from the recent window of the
// epoch (Loader::partner_window), i.e. images that were just loaded as the anchors of earlier
// samples. Without a decoded RAM cache every partner would be decoded again: four JPEG decodes per
// sample. The reference keeps the same window of decoded images (its dataset `buffer`); keeping
// them here decodes each image about once per epoch. Decoding is deterministic, so the pixels are
// those of a fresh decode. Entries are evicted oldest first.
#pragma once

#include <opencv2/core.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace trainer::data {

class RecentImages {
 public:
  explicit RecentImages(size_t capacity) : capacity_(capacity) {}

  // The image, or an empty Mat when it is not held. A held image is shared: never write into it.
  cv::Mat find(int64_t index) const;
  // Keeps `image` (evicting the oldest entry when full); a second put of the same index is a no-op.
  void put(int64_t index, const cv::Mat& image);

  size_t capacity() const { return capacity_; }
  size_t size() const;
  int64_t hits() const;
  int64_t misses() const;

 private:
  size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<int64_t, cv::Mat> images_;
  std::deque<int64_t> order_;
  mutable int64_t hits_ = 0;
  mutable int64_t misses_ = 0;
};

}  // namespace trainer::data
