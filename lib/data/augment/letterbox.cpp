// Letterbox geometry, image and box transforms; see letterbox.h.
// Tested by tests/data/test_augment.cpp: letterbox geometry for hand-computed shapes,
//   round-half-even, image/boxes and inverse.
#include "data/augment/letterbox.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>

namespace trainer::data::augment {

int round_half_even(double value) {
  const double floor = std::floor(value);
  const double diff = value - floor;
  if (diff > 0.5) return static_cast<int>(floor) + 1;
  if (diff < 0.5) return static_cast<int>(floor);
  const int f = static_cast<int>(floor);
  return (f % 2 == 0) ? f : f + 1;
}

LetterboxGeometry letterbox_geometry(int height, int width, int out_height, int out_width,
                                     bool scaleup) {
  LetterboxGeometry g;
  g.out_height = out_height;
  g.out_width = out_width;
  double r =
      std::min(static_cast<double>(out_height) / height, static_cast<double>(out_width) / width);
  if (!scaleup) r = std::min(r, 1.0);
  g.ratio = r;
  g.resized_width = round_half_even(width * r);
  g.resized_height = round_half_even(height * r);
  const double dw = (out_width - g.resized_width) / 2.0;
  const double dh = (out_height - g.resized_height) / 2.0;
  g.top = round_half_even(dh - 0.1);
  g.bottom = round_half_even(dh + 0.1);
  g.left = round_half_even(dw - 0.1);
  g.right = round_half_even(dw + 0.1);
  return g;
}

LetterboxGeometry minimal_letterbox_geometry(int height, int width, int size, int stride) {
  LetterboxGeometry g;
  g.ratio = std::min(static_cast<double>(size) / height, static_cast<double>(size) / width);
  g.resized_width = std::max(round_half_even(width * g.ratio), 1);
  g.resized_height = std::max(round_half_even(height * g.ratio), 1);
  const int pad_w = ((size - g.resized_width) % stride + stride) % stride;  // Python's modulo
  const int pad_h = ((size - g.resized_height) % stride + stride) % stride;
  g.out_width = g.resized_width + pad_w;
  g.out_height = g.resized_height + pad_h;
  g.top = round_half_even(pad_h / 2.0 - 0.1);
  g.bottom = round_half_even(pad_h / 2.0 + 0.1);
  g.left = round_half_even(pad_w / 2.0 - 0.1);
  g.right = round_half_even(pad_w / 2.0 + 0.1);
  return g;
}

Sample letterbox(const Sample& sample, const LetterboxGeometry& g) {
  Sample out;
  cv::Mat resized = sample.image;
  if (sample.image.cols != g.resized_width || sample.image.rows != g.resized_height) {
    cv::resize(sample.image, resized, cv::Size(g.resized_width, g.resized_height), 0, 0,
               cv::INTER_LINEAR);
  }
  cv::copyMakeBorder(resized, out.image, g.top, g.bottom, g.left, g.right, cv::BORDER_CONSTANT,
                     cv::Scalar(114, 114, 114));
  out.classes = sample.classes;
  out.boxes = sample.boxes;
  out.keypoints_per_box = sample.keypoints_per_box;
  out.keypoints = sample.keypoints;
  out.segments = sample.segments;
  out.oriented = sample.oriented;
  const float r = static_cast<float>(g.ratio);
  for (auto& polygon : out.segments) {
    for (auto& p : polygon) p = cv::Point2f(p.x * r + g.left, p.y * r + g.top);
  }
  for (auto& b : out.boxes) {
    b[0] = b[0] * r + g.left;
    b[1] = b[1] * r + g.top;
    b[2] = b[2] * r + g.left;
    b[3] = b[3] * r + g.top;
  }
  for (size_t i = 0; i + 2 < out.keypoints.size(); i += 3) {
    out.keypoints[i] = out.keypoints[i] * r + g.left;
    out.keypoints[i + 1] = out.keypoints[i + 1] * r + g.top;
  }
  return out;
}

PixelBox letterbox_inverse(const PixelBox& box, const LetterboxGeometry& g, int width, int height) {
  const double w = width;
  const double h = height;
  auto map = [&](float v, int pad, double limit) {
    return static_cast<float>(std::clamp((v - pad) / g.ratio, 0.0, limit));
  };
  return {map(box[0], g.left, w), map(box[1], g.top, h), map(box[2], g.left, w),
          map(box[3], g.top, h)};
}

}  // namespace trainer::data::augment
