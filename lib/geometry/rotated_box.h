// Rotated boxes (xywhr): the canonical form, corners, ProbIoU and the exact overlap.
//
// Why: oriented-box training (the OBB task) needs one place for the geometry that its data, loss,
// NMS and evaluation share, written so each rule can be checked by hand. The reference's forms:
// - canonical xywhr (`xyxyxyxy2xywhr`): the minimum-area rectangle of the points (OpenCV's
//   minAreaRect on float32), w the long side (w < h swaps them and adds pi/2), the angle in radians
//   wrapped into [-pi/4, 3pi/4);
// - ProbIoU (`probiou`): each box as a Gaussian with covariance from (w^2/12 + floor, h^2/12 +
//   floor) rotated by the angle; 1 - the Hellinger distance from their Bhattacharyya distance,
//   clamped to [eps, 100], eps = 1e-7;
// plus what the reference does not have: the exact IoU of two rotated rectangles (convex polygon
// intersection), for users who want the overlap itself rather than its Gaussian proxy.
// Torch-free; the loss has its own tensor form of ProbIoU, tested against this one.
#pragma once

#include <array>
#include <vector>

namespace trainer::geometry {

struct RotatedBox {
  double cx = 0, cy = 0, w = 0, h = 0, angle = 0;  // angle in radians, counter-clockwise in image
                                                   // coordinates as OpenCV measures it
};

struct Point {
  double x = 0, y = 0;
};

// w the long side, the angle in [-pi/4, 3pi/4) (the same rectangle).
RotatedBox canonical(RotatedBox box);

// The canonical minimum-area rectangle of `points` (at least one), as the reference computes it
// from float32 points.
RotatedBox min_area_box(const std::vector<Point>& points);

// The 4 corners: centre +- (w/2)(cos, sin) +- (h/2)(-sin, cos), in the reference's order
// (xywhr2xyxyxyxy): c + v1 + v2, c + v1 - v2, c - v1 - v2, c - v1 + v2.
std::array<Point, 4> corners(const RotatedBox& box);

// The reference's ProbIoU of two boxes (its `probiou` with CIoU off); `floor` is added to w^2/12
// and h^2/12 (the box loss uses 0.01 in grid units, matching and NMS 0).
double probiou(const RotatedBox& a, const RotatedBox& b, double floor = 0.0, double eps = 1e-7);

// Area of the intersection of two convex polygons (vertices in order, either orientation).
double convex_intersection_area(const std::vector<Point>& a, const std::vector<Point>& b);

// The exact IoU of two rotated rectangles: intersection area / union area (0 for two empty boxes).
double rotated_iou(const RotatedBox& a, const RotatedBox& b);

// The area where two rotated rectangles overlap.
double rotated_intersection(const RotatedBox& a, const RotatedBox& b);

// A rotated box written as 5 values [cx, cy, w, h, angle] (taken as they are) or as 8 values
// [x1, y1, ..., x4, y4] (the corners' minimum-area rectangle, canonical). std::invalid_argument
// for another count, a non-finite value or a negative side.
RotatedBox rotated_box_from_values(const std::vector<double>& values);

// The axis-aligned extent of a rotated box: [x, y, w, h] of its corners.
std::array<double, 4> extent_xywh(const RotatedBox& box);

}  // namespace trainer::geometry
