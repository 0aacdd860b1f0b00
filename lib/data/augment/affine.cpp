// Random perspective warp, box transform and candidate filter; see affine.h.
// Tested by tests/data/test_augment.cpp: warp source region, box transform for fixed matrices,
//   candidate filter, zero-range random matrix, translation warp.
#include "data/augment/affine.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>

#include "data/augment/polygon.h"
#include "data/stage_profile.h"

namespace trainer::data::augment {

AffineDraw random_affine_matrix(int in_width, int in_height, int out_width, int out_height,
                                const AffineParams& p, SampleRng& rng) {
  cv::Matx33d c = cv::Matx33d::eye();
  c(0, 2) = -in_width / 2.0;
  c(1, 2) = -in_height / 2.0;

  cv::Matx33d persp = cv::Matx33d::eye();
  persp(2, 0) = rng.uniform(-p.perspective, p.perspective);
  persp(2, 1) = rng.uniform(-p.perspective, p.perspective);

  const double angle = rng.uniform(-p.degrees, p.degrees);
  const double s = rng.uniform(1.0 - p.scale, 1.0 + p.scale);
  const cv::Mat rot = cv::getRotationMatrix2D(cv::Point2f(0.f, 0.f), angle, s);
  cv::Matx33d r = cv::Matx33d::eye();
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) r(i, j) = rot.at<double>(i, j);
  }

  cv::Matx33d sh = cv::Matx33d::eye();
  sh(0, 1) = std::tan(rng.uniform(-p.shear, p.shear) * kPi / 180.0);
  sh(1, 0) = std::tan(rng.uniform(-p.shear, p.shear) * kPi / 180.0);

  cv::Matx33d t = cv::Matx33d::eye();
  t(0, 2) = rng.uniform(0.5 - p.translate, 0.5 + p.translate) * out_width;
  t(1, 2) = rng.uniform(0.5 - p.translate, 0.5 + p.translate) * out_height;

  return AffineDraw{t * sh * r * persp * c, s};
}

PixelBox transform_box(const PixelBox& b, const cv::Matx33d& m, bool perspective, float out_width,
                       float out_height) {
  const double xs[4] = {b[0], b[2], b[0], b[2]};
  const double ys[4] = {b[1], b[3], b[3], b[1]};
  double x_min = 1e300, y_min = 1e300, x_max = -1e300, y_max = -1e300;
  for (int k = 0; k < 4; ++k) {
    double x = m(0, 0) * xs[k] + m(0, 1) * ys[k] + m(0, 2);
    double y = m(1, 0) * xs[k] + m(1, 1) * ys[k] + m(1, 2);
    if (perspective) {
      const double z = m(2, 0) * xs[k] + m(2, 1) * ys[k] + m(2, 2);
      x /= z;
      y /= z;
    }
    x_min = std::min(x_min, x), x_max = std::max(x_max, x);
    y_min = std::min(y_min, y), y_max = std::max(y_max, y);
  }
  auto clip = [](double v, float hi) { return static_cast<float>(std::clamp(v, 0.0, double(hi))); };
  return {clip(x_min, out_width), clip(y_min, out_height), clip(x_max, out_width),
          clip(y_max, out_height)};
}

std::array<float, 2> transform_point(float x, float y, const cv::Matx33d& m) {
  const double z = m(2, 0) * x + m(2, 1) * y + m(2, 2);  // exactly 1 for an affine matrix
  return {static_cast<float>((m(0, 0) * x + m(0, 1) * y + m(0, 2)) / z),
          static_cast<float>((m(1, 0) * x + m(1, 1) * y + m(1, 2)) / z)};
}

bool box_candidate(const PixelBox& before, const PixelBox& after, double wh_thr, double ar_thr,
                   double area_thr) {
  constexpr double kEps = 1e-16;
  const double w1 = before[2] - before[0], h1 = before[3] - before[1];
  const double w2 = after[2] - after[0], h2 = after[3] - after[1];
  const double ar = std::max(w2 / (h2 + kEps), h2 / (w2 + kEps));
  return w2 > wh_thr && h2 > wh_thr && w2 * h2 / (w1 * h1 + kEps) > area_thr && ar < ar_thr;
}

cv::Rect warp_source_region(const cv::Matx33d& m, int in_width, int in_height, int out_width,
                            int out_height, bool perspective) {
  const cv::Rect whole(0, 0, in_width, in_height);
  if (perspective) return whole;
  const cv::Matx33d inverse = m.inv();
  double x_min = 1e300, y_min = 1e300, x_max = -1e300, y_max = -1e300;
  for (const double ox : {-1.0, double(out_width)}) {
    for (const double oy : {-1.0, double(out_height)}) {
      const double x = inverse(0, 0) * ox + inverse(0, 1) * oy + inverse(0, 2);
      const double y = inverse(1, 0) * ox + inverse(1, 1) * oy + inverse(1, 2);
      x_min = std::min(x_min, x), x_max = std::max(x_max, x);
      y_min = std::min(y_min, y), y_max = std::max(y_max, y);
    }
  }
  if (!std::isfinite(x_min + x_max + y_min + y_max)) return whole;
  auto clamp_to = [](double v, int hi) {
    return static_cast<int>(std::clamp(v, -1.0, static_cast<double>(hi) + 1.0));
  };
  const int x0 = clamp_to(std::floor(x_min) - 2, in_width),
            x1 = clamp_to(std::ceil(x_max) + 3, in_width);
  const int y0 = clamp_to(std::floor(y_min) - 2, in_height),
            y1 = clamp_to(std::ceil(y_max) + 3, in_height);
  return cv::Rect(x0, y0, std::max(x1 - x0, 0), std::max(y1 - y0, 0)) & whole;
}

Sample warp_sample(const Sample& sample, const AffineDraw& draw, int out_width, int out_height,
                   bool perspective) {
  StageScope scope(Stage::kWarp);
  Sample out;
  const cv::Size size(out_width, out_height);
  const bool identity = draw.matrix == cv::Matx33d::eye() && size == sample.image.size();
  if (identity) {
    out.image = sample.image.clone();  // later steps work in place; never alias a cached image
  } else if (perspective) {
    cv::warpPerspective(sample.image, out.image, cv::Mat(draw.matrix), size, cv::INTER_LINEAR,
                        cv::BORDER_CONSTANT, cv::Scalar(114, 114, 114));
  } else {
    const cv::Matx23d affine(draw.matrix(0, 0), draw.matrix(0, 1), draw.matrix(0, 2),
                             draw.matrix(1, 0), draw.matrix(1, 1), draw.matrix(1, 2));
    cv::warpAffine(sample.image, out.image, cv::Mat(affine), size, cv::INTER_LINEAR,
                   cv::BORDER_CONSTANT, cv::Scalar(114, 114, 114));
  }
  const float s = static_cast<float>(draw.scale);
  const size_t kv = sample.keypoint_values();
  const float w = static_cast<float>(out_width), h = static_cast<float>(out_height);
  const bool polygons = !sample.segments.empty();
  out.keypoints_per_box = sample.keypoints_per_box;
  out.oriented = sample.oriented;
  for (size_t i = 0; i < sample.boxes.size(); ++i) {
    const PixelBox& b = sample.boxes[i];
    PixelBox warped;
    Polygon polygon;
    if (polygons) {
      // The reference's apply_segments: every point through M (divided by z), the box is the
      // moved polygon's visible extent; then Instances.clip (preserve_obb for oriented boxes).
      for (const auto& p : sample.segments[i]) {
        const auto [x, y] = transform_point(p.x, p.y, draw.matrix);
        polygon.emplace_back(x, y);
      }
      warped = visible_box(polygon, w, h);
      if (sample.oriented) {
        clip_oriented_polygon(polygon, warped, w, h);
      } else {
        for (auto& p : polygon) {
          p.x = std::clamp(std::clamp(p.x, warped[0], warped[2]), 0.0f, w);
          p.y = std::clamp(std::clamp(p.y, warped[1], warped[3]), 0.0f, h);
        }
      }
    } else {
      warped = transform_box(b, draw.matrix, perspective, w, h);
    }
    const PixelBox scaled = {b[0] * s, b[1] * s, b[2] * s, b[3] * s};
    // Polygons keep thinner slivers (area ratio 0.01 instead of 0.1), as the reference does.
    if (box_candidate(scaled, warped, 2.0, 100.0, polygons ? 0.01 : 0.1)) {
      out.boxes.push_back(warped);
      out.classes.push_back(sample.classes[i]);
      if (polygons) out.segments.push_back(std::move(polygon));
      const float* points = sample.keypoints_of(i);
      for (size_t k = 0; k < kv; k += 3) {
        const auto [x, y] = transform_point(points[k], points[k + 1], draw.matrix);
        out.keypoints.insert(out.keypoints.end(), {x, y, points[k + 2]});
      }
    }
  }
  clip_keypoints(out, w, h);
  return out;
}

Sample random_perspective(const Sample& sample, int border, const AffineParams& params,
                          SampleRng& rng) {
  const int out_w = sample.width() + 2 * border;
  const int out_h = sample.height() + 2 * border;
  const AffineDraw draw =
      random_affine_matrix(sample.width(), sample.height(), out_w, out_h, params, rng);
  return warp_sample(sample, draw, out_w, out_h, params.perspective != 0.0);
}

Sample random_perspective_to(const Sample& sample, int out_width, int out_height,
                             const AffineParams& params, SampleRng& rng) {
  const AffineDraw draw =
      random_affine_matrix(sample.width(), sample.height(), out_width, out_height, params, rng);
  return warp_sample(sample, draw, out_width, out_height, params.perspective != 0.0);
}

}  // namespace trainer::data::augment
