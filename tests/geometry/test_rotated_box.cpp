// Rotated boxes against hand-computed values and the reference's own numbers (ProbIoU and
// xyxyxyxy2xywhr of Ultralytics 8.4.190, computed once with its functions and quoted here).
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "geometry/rotated_box.h"

using namespace trainer::geometry;
using doctest::Approx;

namespace {
constexpr double kPi = 3.14159265358979323846;
}

TEST_CASE(
    "rotated box: canonical form puts the long side first, the angle from -pi/4 up to 3pi/4") {
  RotatedBox b = canonical({0, 0, 2, 4, 0});  // tall: swapped, +pi/2
  CHECK(b.w == 4);
  CHECK(b.h == 2);
  CHECK(b.angle == Approx(kPi / 2));
  CHECK(canonical({0, 0, 4, 2, kPi}).angle == Approx(0));                 // pi wraps to 0
  CHECK(canonical({0, 0, 4, 2, 3 * kPi / 4}).angle == Approx(-kPi / 4));  // the upper end is open
  CHECK(canonical({0, 0, 4, 2, -kPi / 4}).angle == Approx(-kPi / 4));     // the lower end is closed
  CHECK(canonical({0, 0, 4, 2, -kPi / 2}).angle == Approx(kPi / 2));
  CHECK(canonical({0, 0, 2, 4, 3 * kPi / 4}).angle == Approx(kPi / 4));  // 3pi/4 + pi/2 - pi
  CHECK(canonical({0, 0, 4, 2, 1e6 * kPi + 0.1}).angle == Approx(0.1).epsilon(1e-6));  // far out
  CHECK_THROWS_AS(canonical({0, 0, 4, 2, std::nan("")}), std::invalid_argument);
}

TEST_CASE("rotated box: minimum-area rectangle of DOTA corners, as the reference computes it") {
  // The reference's xyxyxyxy2xywhr on these three rows gave (0.3, 0.2, 0.4, 0.2, 0),
  // (0.25, 0.25, 0.28284, 0.14142, pi/4) and (0.25, 0.3, 0.4, 0.1, pi/2).
  RotatedBox a = min_area_box({{0.1, 0.1}, {0.5, 0.1}, {0.5, 0.3}, {0.1, 0.3}});
  CHECK(a.cx == Approx(0.3));
  CHECK(a.cy == Approx(0.2));
  CHECK(a.w == Approx(0.4));
  CHECK(a.h == Approx(0.2));
  CHECK(a.angle == Approx(0.0));
  RotatedBox b = min_area_box({{0.2, 0.1}, {0.4, 0.3}, {0.3, 0.4}, {0.1, 0.2}});
  CHECK(b.cx == Approx(0.25));
  CHECK(b.cy == Approx(0.25));
  CHECK(b.w == Approx(0.2828427).epsilon(1e-5));
  CHECK(b.h == Approx(0.1414213).epsilon(1e-5));
  CHECK(b.angle == Approx(kPi / 4));
  RotatedBox c = min_area_box({{0.3, 0.1}, {0.3, 0.5}, {0.2, 0.5}, {0.2, 0.1}});
  CHECK(c.cx == Approx(0.25));
  CHECK(c.cy == Approx(0.3));
  CHECK(c.w == Approx(0.4));
  CHECK(c.h == Approx(0.1));
  CHECK(c.angle == Approx(kPi / 2));
}

TEST_CASE("rotated box: corners in the reference's order, and back") {
  const auto p = corners({10, 20, 4, 2, kPi / 2});  // long side vertical
  // v1 = (w/2)(cos, sin) = (0, 2), v2 = (h/2)(-sin, cos) = (-1, 0).
  CHECK(p[0].x == Approx(9));
  CHECK(p[0].y == Approx(22));
  CHECK(p[1].x == Approx(11));
  CHECK(p[1].y == Approx(22));
  CHECK(p[2].x == Approx(11));
  CHECK(p[2].y == Approx(18));
  CHECK(p[3].x == Approx(9));
  CHECK(p[3].y == Approx(18));
  const RotatedBox back = min_area_box({p.begin(), p.end()});
  CHECK(back.cx == Approx(10));
  CHECK(back.w == Approx(4));
  CHECK(back.h == Approx(2));
  CHECK(back.angle == Approx(kPi / 2));
}

TEST_CASE("rotated box: ProbIoU equals the reference's for aligned, rotated and degenerate boxes") {
  // Values from ultralytics.utils.metrics.probiou (float64) on the same pairs.
  CHECK(probiou({10, 10, 4, 2, 0.3}, {10, 10, 4, 2, 0.3}) ==
        Approx(0.9995527864101446).epsilon(1e-12));
  CHECK(probiou({0, 0, 4, 2, 0}, {1, 0, 4, 2, 0}) == Approx(0.7008516191989973).epsilon(1e-12));
  CHECK(probiou({0, 0, 4, 2, 0}, {0, 0, 4, 2, kPi / 2}) ==
        Approx(0.5527862892307513).epsilon(1e-12));
  CHECK(probiou({0, 0, 0, 0, 0}, {0, 0, 4, 2, 0}) == Approx(0.00023714894432358413).epsilon(1e-9));
  CHECK(probiou({0, 0, 4, 2, 0.5}, {1, 2, 3, 1, -0.4}) ==
        Approx(0.0958118088629506).epsilon(1e-12));
  // Identical boxes, by hand: the distance clamps at eps = 1e-7, so 1 - sqrt(1 - e^-eps + eps).
  CHECK(probiou({3, 4, 5, 1, 1.0}, {3, 4, 5, 1, 1.0}) ==
        Approx(1 - std::sqrt(1 - std::exp(-1e-7) + 1e-7)).epsilon(1e-12));
  // Symmetric, and a 180-degree turn is the same box.
  CHECK(probiou({1, 2, 3, 1, -0.4}, {0, 0, 4, 2, 0.5}) ==
        Approx(0.0958118088629506).epsilon(1e-12));
  CHECK(probiou({0, 0, 4, 2, 0.2}, {1, 0, 4, 2, 0.2 + kPi}) ==
        Approx(probiou({0, 0, 4, 2, 0.2}, {1, 0, 4, 2, 0.2})).epsilon(1e-12));
}

TEST_CASE("rotated box: exact IoU of hand-computed overlaps") {
  // Unit squares offset by half a side: 0.5 / 1.5.
  CHECK(rotated_iou({0, 0, 1, 1, 0}, {0.5, 0, 1, 1, 0}) == Approx(1.0 / 3.0));
  // A unit square and itself turned 45 degrees: the regular octagon of area 2(sqrt 2 - 1).
  const double octagon = 2 * (std::sqrt(2.0) - 1);
  CHECK(rotated_iou({0, 0, 1, 1, 0}, {0, 0, 1, 1, kPi / 4}) == Approx(octagon / (2 - octagon)));
  // A 4 x 2 box and the same box turned 90 degrees: a 2 x 2 overlap, 4 / (8 + 8 - 4).
  CHECK(rotated_iou({0, 0, 4, 2, 0}, {0, 0, 4, 2, kPi / 2}) == Approx(4.0 / 12.0));
  CHECK(rotated_iou({0, 0, 4, 2, 0.7}, {0, 0, 4, 2, 0.7}) == Approx(1.0));
  CHECK(rotated_iou({0, 0, 1, 1, 0}, {5, 5, 1, 1, 0.3}) == 0.0);           // apart
  CHECK(rotated_iou({0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}) == 0.0);             // empty
  CHECK(rotated_iou({0, 0, 2, 2, 0}, {0, 0, 1, 1, 0.4}) == Approx(0.25));  // inside: 1 / 4
  // Touching edges share no area.
  CHECK(rotated_iou({0, 0, 1, 1, 0}, {1, 0, 1, 1, 0}) == Approx(0.0));
  CHECK(convex_intersection_area({{0, 0}, {2, 0}, {0, 2}}, {{0, 0}, {0, 2}, {2, 2}, {2, 0}}) ==
        Approx(2.0));  // either orientation
}
