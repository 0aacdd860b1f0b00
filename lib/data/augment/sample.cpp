// Box bookkeeping shared by the augmentations; see sample.h.
// Tested by tests/data/test_augment_keypoints.cpp: keep_boxes keeps keypoints with boxes;
//   clip/append via mosaic keypoint hiding and label clipping.
#include "data/augment/sample.h"

#include <algorithm>
#include <stdexcept>

namespace trainer::data::augment {

void keep_boxes(Sample& sample, const std::vector<bool>& keep) {
  const size_t kv = sample.keypoint_values();
  const bool polygons = !sample.segments.empty();
  size_t out = 0;
  for (size_t i = 0; i < sample.boxes.size(); ++i) {
    if (!keep[i]) continue;
    sample.boxes[out] = sample.boxes[i];
    sample.classes[out] = sample.classes[i];
    if (kv > 0 && out != i) std::copy_n(sample.keypoints_of(i), kv, sample.keypoints_of(out));
    if (polygons && out != i) sample.segments[out] = std::move(sample.segments[i]);
    ++out;
  }
  sample.boxes.resize(out);
  sample.classes.resize(out);
  sample.keypoints.resize(out * kv);
  if (polygons) sample.segments.resize(out);
}

void reorder_instances(Sample& sample, const std::vector<int>& order) {
  const size_t n = sample.size();
  std::vector<bool> seen(n, false);
  for (const int i : order) {
    if (i < 0 || static_cast<size_t>(i) >= n || seen[static_cast<size_t>(i)]) {
      throw std::invalid_argument("reorder_instances: not a permutation of the instances");
    }
    seen[static_cast<size_t>(i)] = true;
  }
  if (order.size() != n) {
    throw std::invalid_argument("reorder_instances: not a permutation of the instances");
  }
  const Sample before =
      Sample{cv::Mat(),        sample.classes,  sample.boxes,   sample.keypoints_per_box,
             sample.keypoints, sample.segments, sample.oriented};
  const size_t kv = sample.keypoint_values();
  const bool polygons = !sample.segments.empty();
  for (size_t j = 0; j < n; ++j) {
    const size_t i = static_cast<size_t>(order[j]);
    sample.classes[j] = before.classes[i];
    sample.boxes[j] = before.boxes[i];
    std::copy_n(before.keypoints_of(i), kv, sample.keypoints_of(j));
    if (polygons) sample.segments[j] = before.segments[i];
  }
}

void clip_boxes(Sample& sample, float width, float height) {
  for (auto& b : sample.boxes) {
    b[0] = std::clamp(b[0], 0.0f, width);
    b[1] = std::clamp(b[1], 0.0f, height);
    b[2] = std::clamp(b[2], 0.0f, width);
    b[3] = std::clamp(b[3], 0.0f, height);
  }
}

void clip_keypoints(Sample& sample, float width, float height) {
  for (size_t i = 0; i + 2 < sample.keypoints.size(); i += 3) {
    float& x = sample.keypoints[i];
    float& y = sample.keypoints[i + 1];
    if (x < 0.0f || x > width || y < 0.0f || y > height) sample.keypoints[i + 2] = 0.0f;
    x = std::clamp(x, 0.0f, width);
    y = std::clamp(y, 0.0f, height);
  }
}

void append_instances(Sample& out, const Sample& part, float dx, float dy) {
  if (!part.boxes.empty() && out.keypoints_per_box != part.keypoints_per_box) {
    throw std::invalid_argument("append_instances: samples with different keypoint counts");
  }
  const bool had_boxes = !out.boxes.empty();
  if (!part.boxes.empty() && had_boxes && out.segments.empty() != part.segments.empty()) {
    throw std::invalid_argument("append_instances: one sample has polygons, the other none");
  }
  for (const auto& polygon : part.segments) {
    out.segments.push_back(polygon);
    for (auto& p : out.segments.back()) p += cv::Point2f(dx, dy);
  }
  for (size_t i = 0; i < part.boxes.size(); ++i) {
    const PixelBox& b = part.boxes[i];
    out.boxes.push_back({b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy});
    out.classes.push_back(part.classes[i]);
  }
  for (size_t i = 0; i + 2 < part.keypoints.size(); i += 3) {
    out.keypoints.insert(out.keypoints.end(), {part.keypoints[i] + dx, part.keypoints[i + 1] + dy,
                                               part.keypoints[i + 2]});
  }
}

}  // namespace trainer::data::augment
