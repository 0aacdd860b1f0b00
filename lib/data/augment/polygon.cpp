// Polygon rules of the augmentations; see polygon.h.
// Tested by tests/data/test_polygons.cpp: visible_box, clip_oriented_polygon, polygon_rotated_box,
//   polygons moved by transforms (resample_outline in test_outlines).
#include "data/augment/polygon.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace trainer::data::augment {
namespace {

struct Bounds {
  float x1 = std::numeric_limits<float>::infinity(), y1 = x1;
  float x2 = -std::numeric_limits<float>::infinity(), y2 = x2;
  void add(float x, float y) {
    x1 = std::min(x1, x), y1 = std::min(y1, y);
    x2 = std::max(x2, x), y2 = std::max(y2, y);
  }
  bool empty() const { return x1 > x2; }
  PixelBox box() const { return empty() ? PixelBox{0, 0, 0, 0} : PixelBox{x1, y1, x2, y2}; }
};

Bounds bounds_of(const Polygon& polygon) {
  Bounds b;
  for (const auto& p : polygon) b.add(p.x, p.y);
  return b;
}

}  // namespace

PixelBox visible_box(const Polygon& polygon, float width, float height) {
  if (polygon.empty()) return {0, 0, 0, 0};
  const Bounds all = bounds_of(polygon);
  if (all.x1 >= 0 && all.y1 >= 0 && all.x2 <= width && all.y2 <= height) return all.box();
  if (all.x2 < 0 || all.y2 < 0 || all.x1 > width || all.y1 > height) return {0, 0, 0, 0};
  Bounds visible;
  for (const auto& p : polygon) {
    if (p.x >= 0 && p.y >= 0 && p.x <= width && p.y <= height) visible.add(p.x, p.y);
  }
  // Each edge (closing edge included) against the lines x = 0, x = width, y = 0, y = height: a
  // crossing within the edge (0 <= t <= 1) that lies on the image's side counts.
  const size_t n = polygon.size();
  for (size_t i = 0; i < n; ++i) {
    const cv::Point2f a = polygon[i], d = polygon[(i + 1) % n] - polygon[i];
    for (const float x : {0.0f, width}) {
      const float t = (x - a.x) / d.x;  // inf or nan for a vertical edge: never in [0, 1]
      const float y = a.y + t * d.y;
      if (t >= 0 && t <= 1 && y >= 0 && y <= height) visible.add(a.x + t * d.x, y);
    }
    for (const float y : {0.0f, height}) {
      const float t = (y - a.y) / d.y;
      const float x = a.x + t * d.x;
      if (t >= 0 && t <= 1 && x >= 0 && x <= width) visible.add(x, a.y + t * d.y);
    }
  }
  for (const cv::Point2f corner : {cv::Point2f(0, 0), cv::Point2f(width, 0), cv::Point2f(0, height),
                                   cv::Point2f(width, height)}) {
    if (cv::pointPolygonTest(polygon, corner, false) >= 0) visible.add(corner.x, corner.y);
  }
  return visible.box();
}

bool clip_oriented_polygon(Polygon& polygon, PixelBox& box, float width, float height) {
  if (polygon.empty()) return false;
  const Bounds all = bounds_of(polygon);
  if (all.x1 >= 0 && all.y1 >= 0 && all.x2 <= width && all.y2 <= height) return true;
  const Polygon canvas = {{0, 0}, {width, 0}, {width, height}, {0, height}};
  Polygon hull, visible;
  cv::convexHull(polygon, hull);
  const float area = cv::intersectConvexConvex(hull, canvas, visible);
  if (visible.empty() || area <= 0) {
    polygon.assign(4, cv::Point2f(0, 0));
    box = {0, 0, 0, 0};
    return false;
  }
  box = bounds_of(visible).box();
  // The visible part measured along the full polygon's own rectangle, so a crop at the border
  // cannot change the box's orientation.
  const cv::RotatedRect own = cv::minAreaRect(polygon);
  double degrees = own.angle;
  if (own.size.width < own.size.height) degrees += 90;
  const float c = static_cast<float>(std::cos(degrees * M_PI / 180.0));
  const float s = static_cast<float>(std::sin(degrees * M_PI / 180.0));
  Bounds aligned;  // (u, v) = p . (c, s), p . (-s, c)
  for (const auto& p : visible) aligned.add(p.x * c + p.y * s, -p.x * s + p.y * c);
  auto back = [&](float u, float v) { return cv::Point2f(u * c - v * s, u * s + v * c); };
  polygon = {back(aligned.x2, aligned.y2), back(aligned.x2, aligned.y1),
             back(aligned.x1, aligned.y1), back(aligned.x1, aligned.y2)};
  return true;
}

void clip_polygons(Sample& sample, float width, float height) {
  for (size_t i = 0; i < sample.segments.size(); ++i) {
    Polygon& polygon = sample.segments[i];
    if (sample.oriented) {
      clip_oriented_polygon(polygon, sample.boxes[i], width, height);
    } else {
      for (auto& p : polygon) {
        p.x = std::clamp(p.x, 0.0f, width);
        p.y = std::clamp(p.y, 0.0f, height);
      }
    }
  }
}

std::vector<float> resample_outline(const std::vector<float>& xy, size_t count) {
  const size_t points = xy.size() / 2;
  if (points == count || points == 0 || count == 0) return xy;
  // The closed outline: m + 1 vertices at index positions 0..m (the last is the first again).
  const size_t m = points;
  auto vertex = [&](size_t j, size_t axis) {
    return static_cast<double>(xy[(j == m ? 0 : j) * 2 + axis]);
  };
  // np.linspace(0, m, k): i * (m / (k - 1)), the last exactly m.
  auto even_positions = [&](size_t k) {
    std::vector<double> x(k);
    const double step = k > 1 ? static_cast<double>(m) / static_cast<double>(k - 1) : 0.0;
    for (size_t i = 0; i < k; ++i) x[i] = static_cast<double>(i) * step;
    if (k > 1) x[k - 1] = static_cast<double>(m);
    return x;
  };
  std::vector<double> at;
  if (m + 1 < count) {
    // The even positions with the vertex indices merged in (np.insert at searchsorted: a vertex
    // goes before an equal position; equal values interpolate to the same point either way).
    const std::vector<double> x = even_positions(count - (m + 1));
    at.reserve(count);
    size_t i = 0;
    for (size_t j = 0; j <= m; ++j) {
      while (i < x.size() && x[i] < static_cast<double>(j)) at.push_back(x[i++]);
      at.push_back(static_cast<double>(j));
    }
    while (i < x.size()) at.push_back(x[i++]);
  } else {
    at = even_positions(count);
  }
  std::vector<float> out;
  out.reserve(at.size() * 2);
  for (const double x : at) {
    // np.interp on xp = 0..m: slope * (x - xp[j]) + fp[j], fp[m] at the end.
    const size_t j = std::min(static_cast<size_t>(x), m);
    for (size_t axis = 0; axis < 2; ++axis) {
      const double value =
          j == m ? vertex(m, axis)
                 : (vertex(j + 1, axis) - vertex(j, axis)) * (x - static_cast<double>(j)) +
                       vertex(j, axis);
      out.push_back(static_cast<float>(value));
    }
  }
  return out;
}

size_t outline_resample_count(const std::vector<std::vector<float>>& outlines) {
  constexpr size_t kOutlinePoints = 1000;
  size_t longest = 0;
  for (const auto& xy : outlines) longest = std::max(longest, xy.size() / 2);
  return longest > kOutlinePoints ? longest + 1 : kOutlinePoints;
}

geometry::RotatedBox polygon_rotated_box(const Polygon& polygon) {
  std::vector<geometry::Point> points;
  points.reserve(polygon.size());
  for (const auto& p : polygon) points.push_back({p.x, p.y});
  return geometry::min_area_box(points);
}

}  // namespace trainer::data::augment
