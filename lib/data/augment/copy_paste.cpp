// Copy-paste; see copy_paste.h.
// Tested by tests/data/test_outlines.cpp: copy_paste_flip pastes mirrored objects clear of boxes;
//   paste_objects (mixup mode) 30% overlap rule.
#include "data/augment/copy_paste.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace trainer::data::augment {
namespace {

// Intersection of a and b over the area of b (the reference's bbox_ioa(a, b)).
double intersection_over_b(const PixelBox& a, const PixelBox& b) {
  const double w = std::max(0.0, double(std::min(a[2], b[2])) - std::max(a[0], b[0]));
  const double h = std::max(0.0, double(std::min(a[3], b[3])) - std::max(a[1], b[1]));
  const double area = (double(b[2]) - b[0]) * (double(b[3]) - b[1]) + 1e-7;
  return w * h / area;
}

}  // namespace

int paste_objects(Sample& sample, const Sample& source, const cv::Mat& source_image,
                  double fraction) {
  if (sample.segments.empty() || fraction <= 0.0 || source.segments.empty()) return 0;
  // Eligible candidates: below 0.30 against every existing box; by increasing largest overlap.
  std::vector<size_t> eligible;
  std::vector<double> worst(source.size(), 0.0);
  for (size_t j = 0; j < source.size(); ++j) {
    bool ok = true;
    for (const auto& box : sample.boxes) {
      const double ioa = intersection_over_b(source.boxes[j], box);
      worst[j] = std::max(worst[j], ioa);
      ok = ok && ioa < 0.30;
    }
    if (ok) eligible.push_back(j);
  }
  std::stable_sort(eligible.begin(), eligible.end(),
                   [&](size_t a, size_t b) { return worst[a] < worst[b]; });
  // Python's round (half to even) of fraction x eligible.
  const auto take = static_cast<size_t>(std::nearbyint(fraction * double(eligible.size())));
  eligible.resize(std::min(take, eligible.size()));
  if (eligible.empty()) return 0;
  cv::Mat paste = cv::Mat::zeros(sample.image.size(), CV_8U);
  for (const size_t j : eligible) {
    std::vector<cv::Point> points;
    for (const auto& p : source.segments[j]) {
      points.emplace_back(static_cast<int>(p.x), static_cast<int>(p.y));
    }
    cv::drawContours(paste, std::vector<std::vector<cv::Point>>{points}, -1, cv::Scalar(1),
                     cv::FILLED);
  }
  // A copy: the sample's pixels may be shared (the recent-images cache, the mosaic canvas).
  sample.image = sample.image.clone();
  source_image.copyTo(sample.image, paste);
  for (const size_t j : eligible) {
    sample.classes.push_back(source.classes[j]);
    sample.boxes.push_back(source.boxes[j]);
    sample.segments.push_back(source.segments[j]);
    const size_t kv = source.keypoint_values();
    sample.keypoints.insert(sample.keypoints.end(), source.keypoints_of(j),
                            source.keypoints_of(j) + kv);
  }
  return static_cast<int>(eligible.size());
}

int copy_paste_flip(Sample& sample, double fraction) {
  if (sample.segments.empty() || fraction <= 0.0) return 0;
  Sample mirrored;
  mirrored.classes = sample.classes;
  mirrored.oriented = sample.oriented;
  mirrored.keypoints_per_box = sample.keypoints_per_box;
  mirrored.keypoints = sample.keypoints;
  const float w = static_cast<float>(sample.width());
  for (size_t i = 0; i < sample.size(); ++i) {
    const PixelBox& b = sample.boxes[i];
    mirrored.boxes.push_back({w - b[2], b[1], w - b[0], b[3]});
    auto polygon = sample.segments[i];
    for (auto& p : polygon) p.x = w - p.x;
    mirrored.segments.push_back(std::move(polygon));
  }
  cv::Mat flipped;
  cv::flip(sample.image, flipped, 1);
  return paste_objects(sample, mirrored, flipped, fraction);
}

}  // namespace trainer::data::augment
