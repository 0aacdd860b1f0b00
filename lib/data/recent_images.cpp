// A bounded, thread-safe map of recently decoded images; see recent_images.h.
// Tested by tests/data/test_data_cli.cpp: bench data JSON: recent_images hit_rate > 0.5 without RAM
//   cache (via binary).
#include "data/recent_images.h"

namespace trainer::data {

cv::Mat RecentImages::find(int64_t index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = images_.find(index);
  if (it == images_.end()) {
    ++misses_;
    return cv::Mat();
  }
  ++hits_;
  return it->second;
}

void RecentImages::put(int64_t index, const cv::Mat& image) {
  if (capacity_ == 0 || image.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!images_.emplace(index, image).second) return;
  order_.push_back(index);
  while (order_.size() > capacity_) {
    images_.erase(order_.front());
    order_.pop_front();
  }
}

size_t RecentImages::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return images_.size();
}

int64_t RecentImages::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

int64_t RecentImages::misses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return misses_;
}

}  // namespace trainer::data
