// Segmentation ground truth as the reference's Format makes it (reference-tasks.md 4.3): each
// outline's points truncated to integers and filled at full resolution (cv::fillPoly), then
// resized (bilinear) to a 1/ratio grid; with `overlap`, one index image where pixel value i + 1
// marks instance i of the instances re-ordered by decreasing mask area (smaller objects drawn
// over larger ones), else one 0/1 mask per instance.
//
// Why its own unit: the loss reads these pixels directly, so they must be the reference's to the
// pixel; and filling a full-size image per object is the loader's most expensive step for
// segmentation, so the fill runs on the object's own region (exact: a bilinear 1/ratio resize
// reads only each output pixel's own ratio x ratio block).
#pragma once

#include <opencv2/core.hpp>

#include <vector>

namespace trainer::data {

// One outline's mask at (height / ratio, width / ratio), CV_8U 0/1. `outline` in pixels of the
// height x width image.
cv::Mat outline_mask(const std::vector<cv::Point2f>& outline, int height, int width, int ratio);

struct InstanceMasks {
  // overlap: CV_32S (height / ratio, width / ratio), 0 = background, i + 1 = instance order[i].
  cv::Mat index;
  // not overlap: one CV_8U 0/1 mask per instance, in the given order.
  std::vector<cv::Mat> masks;
  // overlap: the instances by decreasing mask area (ties keep their order); else 0..n-1.
  std::vector<int> order;
};

// Throws std::invalid_argument when ratio exceeds min(height, width) (the masks would be empty).
InstanceMasks rasterise_outlines(const std::vector<std::vector<cv::Point2f>>& outlines, int height,
                                 int width, int ratio, bool overlap);

}  // namespace trainer::data
