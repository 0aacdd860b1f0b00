// Predicted boxes back to original pixels, hand-computed (the validator's one geometry rule).
#include <doctest/doctest.h>

#include "engine/validator.h"

using trainer::engine::to_original_xyxy;

TEST_CASE("validator: letterboxed boxes map back to original pixels, clamped, never negative") {
  // A 200 x 100 (w x h) image resized by 0.5 and padded 4 px left, 10 px top.
  const trainer::data::ImageGeometry g{100, 200, 0.5, 4.0, 10.0};
  using Box = std::array<float, 4>;
  // (14 - 4) / 0.5 = 20, (20 - 10) / 0.5 = 20, (54 - 4) / 0.5 = 100, (40 - 10) / 0.5 = 60.
  CHECK(to_original_xyxy({14, 20, 54, 40}, g) == Box{20, 20, 100, 60});
  // Outside the image: clamped to [0, 200] x [0, 100].
  CHECK(to_original_xyxy({0, 0, 500, 500}, g) == Box{0, 0, 200, 100});
  // x2 < x1 and y2 < y1 (a YOLO26 box with negative side distances): empty at its first corner.
  CHECK(to_original_xyxy({54, 40, 14, 20}, g) == Box{100, 60, 100, 60});
  // Only one side inverted: the other keeps its extent.
  CHECK(to_original_xyxy({14, 40, 54, 20}, g) == Box{20, 60, 100, 60});
}
