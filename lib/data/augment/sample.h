// The working form of one training sample while it moves through the augmentations.
//
// Why: every transform (mosaic, affine, HSV, flip, letterbox, mixup) takes and returns the same
// small value: a BGR uint8 image and its boxes in pixels of that image (x1, y1, x2, y2). Boxes are
// normalised only once, at the end (the reference's `Format`), so no transform has to guess which
// image size a coordinate refers to.
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

  size_t size() const { return boxes.size(); }
  int width() const { return image.cols; }
  int height() const { return image.rows; }
};

// Keeps only the boxes whose `keep[i]` is true (classes follow).
void keep_boxes(Sample& sample, const std::vector<bool>& keep);

// Clips every box to [0, width] x [0, height].
void clip_boxes(Sample& sample, float width, float height);

}  // namespace trainer::data::augment
