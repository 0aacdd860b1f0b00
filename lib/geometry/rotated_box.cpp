// Rotated-box geometry; see rotated_box.h.
#include "geometry/rotated_box.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace trainer::geometry {
namespace {

constexpr double kPi = 3.14159265358979323846;

double cross(const Point& o, const Point& a, const Point& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

double signed_area(const std::vector<Point>& p) {
  double s = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const Point& a = p[i];
    const Point& b = p[(i + 1) % p.size()];
    s += a.x * b.y - b.x * a.y;
  }
  return 0.5 * s;
}

std::vector<Point> counter_clockwise(std::vector<Point> p) {
  if (signed_area(p) < 0) std::reverse(p.begin(), p.end());
  return p;
}

// Keeps the part of `subject` on the left of the directed edge a -> b (Sutherland-Hodgman).
std::vector<Point> clip_by_edge(const std::vector<Point>& subject, const Point& a, const Point& b) {
  std::vector<Point> out;
  const size_t n = subject.size();
  for (size_t i = 0; i < n; ++i) {
    const Point& p = subject[i];
    const Point& q = subject[(i + 1) % n];
    const double sp = cross(a, b, p), sq = cross(a, b, q);
    if (sp >= 0) out.push_back(p);
    if ((sp >= 0) != (sq >= 0)) {
      const double t = sp / (sp - sq);
      out.push_back({p.x + t * (q.x - p.x), p.y + t * (q.y - p.y)});
    }
  }
  return out;
}

}  // namespace

RotatedBox canonical(RotatedBox box) {
  if (box.w < box.h) {
    std::swap(box.w, box.h);
    box.angle += kPi / 2;
  }
  if (!std::isfinite(box.angle)) {
    throw std::invalid_argument("canonical: the angle is not finite");
  }
  if (std::abs(box.angle) > 8 * kPi) box.angle = std::remainder(box.angle, kPi);  // far out
  while (box.angle >= 3 * kPi / 4) box.angle -= kPi;
  while (box.angle < -kPi / 4) box.angle += kPi;
  return box;
}

RotatedBox min_area_box(const std::vector<Point>& points) {
  if (points.empty()) throw std::invalid_argument("min_area_box: no points");
  std::vector<cv::Point2f> p;
  p.reserve(points.size());
  for (const Point& q : points) p.emplace_back(static_cast<float>(q.x), static_cast<float>(q.y));
  const cv::RotatedRect r = cv::minAreaRect(p);
  return canonical({r.center.x, r.center.y, r.size.width, r.size.height,
                    static_cast<double>(r.angle) / 180.0 * kPi});
}

std::array<Point, 4> corners(const RotatedBox& b) {
  const double c = std::cos(b.angle), s = std::sin(b.angle);
  const Point v1{b.w / 2 * c, b.w / 2 * s};
  const Point v2{-b.h / 2 * s, b.h / 2 * c};
  return {
      Point{b.cx + v1.x + v2.x, b.cy + v1.y + v2.y}, Point{b.cx + v1.x - v2.x, b.cy + v1.y - v2.y},
      Point{b.cx - v1.x - v2.x, b.cy - v1.y - v2.y}, Point{b.cx - v1.x + v2.x, b.cy - v1.y + v2.y}};
}

double probiou(const RotatedBox& p, const RotatedBox& q, double floor, double eps) {
  auto covariance = [floor](const RotatedBox& r, double* A, double* B, double* C) {
    const double a = r.w * r.w / 12.0 + floor, b = r.h * r.h / 12.0 + floor;
    const double c = std::cos(r.angle), s = std::sin(r.angle);
    *A = a * c * c + b * s * s;
    *B = a * s * s + b * c * c;
    *C = (a - b) * c * s;
  };
  double a1, b1, c1, a2, b2, c2;
  covariance(p, &a1, &b1, &c1);
  covariance(q, &a2, &b2, &c2);
  const double dx = p.cx - q.cx, dy = p.cy - q.cy;
  const double s = (a1 + a2) * (b1 + b2) - (c1 + c2) * (c1 + c2);
  const double t1 = 0.25 * ((a1 + a2) * dy * dy + (b1 + b2) * dx * dx) / (s + eps);
  const double t2 = 0.5 * ((c1 + c2) * (q.cx - p.cx) * dy) / (s + eps);
  const double det1 = std::max(a1 * b1 - c1 * c1, 0.0), det2 = std::max(a2 * b2 - c2 * c2, 0.0);
  const double t3 = 0.5 * std::log(s / (4 * std::sqrt(det1 * det2) + eps) + eps);
  const double bd = std::clamp(t1 + t2 + t3, eps, 100.0);
  const double hd = std::sqrt(1.0 - std::exp(-bd) + eps);
  return 1.0 - hd;
}

double convex_intersection_area(const std::vector<Point>& a, const std::vector<Point>& b) {
  if (a.size() < 3 || b.size() < 3) return 0.0;
  std::vector<Point> clipped = counter_clockwise(a);
  const std::vector<Point> clip = counter_clockwise(b);
  for (size_t i = 0; i < clip.size() && clipped.size() >= 3; ++i) {
    clipped = clip_by_edge(clipped, clip[i], clip[(i + 1) % clip.size()]);
  }
  return clipped.size() < 3 ? 0.0 : std::abs(signed_area(clipped));
}

double rotated_intersection(const RotatedBox& a, const RotatedBox& b) {
  const auto ca = corners(a), cb = corners(b);
  return convex_intersection_area({ca.begin(), ca.end()}, {cb.begin(), cb.end()});
}

double rotated_iou(const RotatedBox& a, const RotatedBox& b) {
  const double inter = rotated_intersection(a, b);
  const double uni = a.w * a.h + b.w * b.h - inter;
  return uni > 0 ? inter / uni : 0.0;
}

RotatedBox rotated_box_from_values(const std::vector<double>& v) {
  for (double x : v) {
    if (!std::isfinite(x)) throw std::invalid_argument("a rotated box holds a non-finite value");
  }
  if (v.size() == 5) {
    if (v[2] < 0 || v[3] < 0) throw std::invalid_argument("a rotated box has a negative side");
    return {v[0], v[1], v[2], v[3], v[4]};
  }
  if (v.size() == 8) return min_area_box({{v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, {v[6], v[7]}});
  throw std::invalid_argument(
      "a rotated box is 5 values [cx, cy, w, h, angle] or 8 corner values, got " +
      std::to_string(v.size()));
}

std::array<double, 4> extent_xywh(const RotatedBox& box) {
  double x1 = std::numeric_limits<double>::infinity(), y1 = x1, x2 = -x1, y2 = -x1;
  for (const Point& p : corners(box)) {
    x1 = std::min(x1, p.x), y1 = std::min(y1, p.y);
    x2 = std::max(x2, p.x), y2 = std::max(y2, p.y);
  }
  return {x1, y1, x2 - x1, y2 - y1};
}

}  // namespace trainer::geometry
