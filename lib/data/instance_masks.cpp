// Outline rasterisation; see instance_masks.h.
// Tested by tests/data/test_outlines.cpp: outline_mask pixel counts vs whole-image oracle,
//   rasterise_outlines overlap index by area.
#include "data/instance_masks.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace trainer::data {

cv::Mat outline_mask(const std::vector<cv::Point2f>& outline, int height, int width, int ratio) {
  const int out_h = height / ratio, out_w = width / ratio;
  cv::Mat out = cv::Mat::zeros(out_h, out_w, CV_8U);
  if (outline.empty() || out_h == 0 || out_w == 0) return out;
  // np.asarray(points, dtype=np.int32): truncation toward zero.
  std::vector<cv::Point> points;
  points.reserve(outline.size());
  int x1 = width, y1 = height, x2 = 0, y2 = 0;
  for (const auto& p : outline) {
    const cv::Point q(static_cast<int>(p.x), static_cast<int>(p.y));
    points.push_back(q);
    x1 = std::min(x1, q.x), y1 = std::min(y1, q.y);
    x2 = std::max(x2, q.x), y2 = std::max(y2, q.y);
  }
  // The region of whole ratio x ratio blocks that holds the filled pixels (when the image is made
  // of whole blocks; otherwise the resize's last row/column mixes partial blocks: fill it all).
  cv::Rect region(0, 0, width, height);
  if (height % ratio == 0 && width % ratio == 0) {
    const int bx1 = std::clamp(x1 / ratio, 0, out_w), by1 = std::clamp(y1 / ratio, 0, out_h);
    const int bx2 = std::clamp(x2 / ratio + 1, 0, out_w),
              by2 = std::clamp(y2 / ratio + 1, 0, out_h);
    if (bx2 <= bx1 || by2 <= by1) return out;  // entirely outside the image
    region = cv::Rect(bx1 * ratio, by1 * ratio, (bx2 - bx1) * ratio, (by2 - by1) * ratio);
  }
  cv::Mat full = cv::Mat::zeros(region.height, region.width, CV_8U);
  const std::vector<std::vector<cv::Point>> polygons = {points};
  cv::fillPoly(full, polygons, cv::Scalar(1), cv::LINE_8, 0, cv::Point(-region.x, -region.y));
  cv::Mat small;  // the whole image's (out_h, out_w) when the region is the whole image
  cv::resize(full, small, cv::Size(region.width / ratio, region.height / ratio), 0, 0,
             cv::INTER_LINEAR);
  if (region.width == width && region.height == height) return small;
  small.copyTo(out(cv::Rect(region.x / ratio, region.y / ratio, small.cols, small.rows)));
  return out;
}

InstanceMasks rasterise_outlines(const std::vector<std::vector<cv::Point2f>>& outlines, int height,
                                 int width, int ratio, bool overlap) {
  if (ratio < 1 || ratio > std::min(height, width)) {
    throw std::invalid_argument(
        "mask_ratio=" + std::to_string(ratio) + " downsamples a " + std::to_string(height) + "x" +
        std::to_string(width) +
        " image to empty masks; use mask_ratio <= " + std::to_string(std::min(height, width)));
  }
  InstanceMasks out;
  out.masks.reserve(outlines.size());
  for (const auto& outline : outlines)
    out.masks.push_back(outline_mask(outline, height, width, ratio));
  out.order.resize(outlines.size());
  std::iota(out.order.begin(), out.order.end(), 0);
  if (!overlap) return out;
  std::vector<int> areas(outlines.size());
  for (size_t i = 0; i < outlines.size(); ++i) areas[i] = cv::countNonZero(out.masks[i]);
  // np.argsort(-areas): decreasing area. NumPy's default sort is not stable for more than 16
  // items; ties keep their order here (tied masks differ only in which one a shared pixel shows).
  std::stable_sort(out.order.begin(), out.order.end(),
                   [&](int a, int b) { return areas[a] > areas[b]; });
  out.index = cv::Mat::zeros(height / ratio, width / ratio, CV_32S);
  for (size_t i = 0; i < out.order.size(); ++i) {
    out.index.setTo(cv::Scalar(static_cast<int>(i) + 1), out.masks[out.order[i]]);
  }
  out.masks.clear();
  return out;
}

}  // namespace trainer::data
