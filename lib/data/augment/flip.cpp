// Flips; see flip.h.
// Tested by tests/data/test_augment.cpp: boxes follow flipped pixels (keypoint flip_idx swap in
//   test_augment_keypoints).
#include "data/augment/flip.h"

#include <algorithm>

#include "data/stage_profile.h"

namespace trainer::data::augment {
namespace {

// Left and right keypoints trade places: point k takes the values of point flip_idx[k].
void permute_keypoints(Sample& sample, const std::vector<int>& flip_idx) {
  const size_t k_count = static_cast<size_t>(sample.keypoints_per_box);
  if (flip_idx.empty() || k_count == 0) return;
  std::vector<float> original;
  for (size_t box = 0; box < sample.boxes.size(); ++box) {
    float* points = sample.keypoints_of(box);
    original.assign(points, points + 3 * k_count);
    for (size_t k = 0; k < k_count; ++k) {
      std::copy_n(original.data() + 3 * static_cast<size_t>(flip_idx[k]), 3, points + 3 * k);
    }
  }
}

}  // namespace

void flip_horizontal(Sample& sample, const std::vector<int>& flip_idx) {
  StageScope scope(Stage::kFlip);
  cv::flip(sample.image, sample.image, 1);
  flip_horizontal_labels(sample, sample.width(), flip_idx);
}

void flip_horizontal_labels(Sample& sample, int width, const std::vector<int>& flip_idx) {
  const float w = static_cast<float>(width);
  for (auto& b : sample.boxes) {
    const float x1 = w - b[2];
    const float x2 = w - b[0];
    b[0] = x1;
    b[2] = x2;
  }
  for (size_t i = 0; i < sample.keypoints.size(); i += 3)
    sample.keypoints[i] = w - sample.keypoints[i];
  for (auto& polygon : sample.segments) {
    for (auto& p : polygon) p.x = w - p.x;
  }
  permute_keypoints(sample, flip_idx);
}

void flip_vertical(Sample& sample, const std::vector<int>& flip_idx) {
  StageScope scope(Stage::kFlip);
  cv::flip(sample.image, sample.image, 0);
  const float h = static_cast<float>(sample.height());
  for (auto& b : sample.boxes) {
    const float y1 = h - b[3];
    const float y2 = h - b[1];
    b[1] = y1;
    b[3] = y2;
  }
  for (size_t i = 1; i < sample.keypoints.size(); i += 3)
    sample.keypoints[i] = h - sample.keypoints[i];
  for (auto& polygon : sample.segments) {
    for (auto& p : polygon) p.y = h - p.y;
  }
  permute_keypoints(sample, flip_idx);
}

void random_flips(Sample& sample, double flipud, double fliplr, SampleRng& rng,
                  const std::vector<int>& flip_idx) {
  if (flipud > 0.0 && rng.uniform() < flipud) flip_vertical(sample, flip_idx);
  if (fliplr > 0.0 && rng.uniform() < fliplr) flip_horizontal(sample, flip_idx);
}

}  // namespace trainer::data::augment
