// The working form of one training sample while it moves through the augmentations.
//
// Why: every transform (mosaic, affine, HSV, flip, letterbox, mixup) takes and returns the same
// small value: a BGR uint8 image and its boxes in pixels of that image (x1, y1, x2, y2). Boxes are
// normalised only once, at the end (the reference's `Format`), so no transform has to guess which
// image size a coordinate refers to. Pose samples also carry K keypoints per box, moved by every
// transform exactly like the pixels; a point that leaves the image becomes invisible (v = 0).
// OBB (and segmentation) samples carry each box's polygon, moved the same way; the box of a moved
// polygon is its visible extent (polygon.h).
#pragma once

#include <opencv2/core.hpp>

#include <array>
#include <vector>

namespace trainer::data::augment {

using PixelBox = std::array<float, 4>;  // x1, y1, x2, y2 in pixels

struct Sample {
  cv::Mat image;  // HxWx3 uint8, BGR
  std::vector<int> classes;
  std::vector<PixelBox> boxes;
  // Pose: K points per box, each (x, y, visibility) in pixels of `image`, box-major
  // (size = boxes * K * 3); K = 0 (and no keypoints) for the other tasks.
  int keypoints_per_box = 0;
  std::vector<float> keypoints;
  // OBB and segmentation: each box's polygon in pixels of `image`, one per box (empty for the
  // other tasks). `oriented`: the polygons are oriented boxes, clipped at the image border as the
  // reference's preserve_obb (polygon.h), and turned into rotated boxes at the end.
  std::vector<std::vector<cv::Point2f>> segments;
  bool oriented = false;

  size_t size() const { return boxes.size(); }
  float* keypoints_of(size_t box) { return keypoints.data() + box * keypoint_values(); }
  const float* keypoints_of(size_t box) const { return keypoints.data() + box * keypoint_values(); }
  size_t keypoint_values() const { return static_cast<size_t>(keypoints_per_box) * 3; }
  int width() const { return image.cols; }
  int height() const { return image.rows; }
};

// Keeps only the boxes whose `keep[i]` is true (classes, keypoints and polygons follow).
void keep_boxes(Sample& sample, const std::vector<bool>& keep);

// Re-orders the instances: instance i of the result is instance order[i] of `sample` (classes,
// keypoints and polygons follow). `order` must be a permutation of 0..size()-1
// (std::invalid_argument otherwise).
void reorder_instances(Sample& sample, const std::vector<int>& order);

// Clips every box to [0, width] x [0, height].
void clip_boxes(Sample& sample, float width, float height);

// The reference's Instances.clip for keypoints: a point outside [0, width] x [0, height] becomes
// invisible (v = 0), then every point is clamped into that range.
void clip_keypoints(Sample& sample, float width, float height);

// Appends `part`'s boxes, classes, keypoints and polygons to `out`, shifted by (dx, dy) pixels.
// Both must have the same keypoints_per_box and both carry polygons or neither
// (std::invalid_argument otherwise).
void append_instances(Sample& out, const Sample& part, float dx = 0.0f, float dy = 0.0f);

}  // namespace trainer::data::augment
