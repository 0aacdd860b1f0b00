// Letterboxed outputs back to original pixels, hand-computed: boxes and points (clipped, per-axis
// gains), rotated boxes (not clipped), and masks (the letterbox window, bilinear, bytes truncated).
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <array>

#include "data/letterbox_inverse.h"

using namespace trainer;

TEST_CASE("to_original_xyxy: letterboxed boxes map back to original pixels with per-axis gains") {
  // A 200 x 100 (w x h) image: x gain 0.5, y gain 0.4, padded 4 px left, 10 px top.
  const trainer::data::ImageGeometry g{100, 200, 0.5, 0.4, 4.0, 10.0};
  using Box = std::array<float, 4>;
  // (14 - 4) / 0.5 = 20, (20 - 10) / 0.4 = 25, (54 - 4) / 0.5 = 100, (40 - 10) / 0.4 = 75.
  CHECK(data::to_original_xyxy({14, 20, 54, 40}, g) == Box{20, 25, 100, 75});
  // Outside the image: clipped to [0, 200] x [0, 100].
  CHECK(data::to_original_xyxy({0, 0, 500, 500}, g) == Box{0, 0, 200, 100});
  // x2 < x1 and y2 < y1 (a YOLO26 box with negative side distances): kept inverted, as 8.4.190.
  CHECK(data::to_original_xyxy({54, 40, 14, 20}, g) == Box{100, 75, 20, 25});
  CHECK(data::to_original_xyxy({14, 40, 54, 20}, g) == Box{20, 75, 100, 25});
}

TEST_CASE("to_original_point: minus the padding, over the axis's gain, clipped to the image") {
  const data::ImageGeometry g{100, 200, 0.5, 0.4, 4.0, 10.0};
  using Point = std::array<float, 2>;
  CHECK(data::to_original_point(54, 40, g) == Point{100, 75});  // (54 - 4) / 0.5, (40 - 10) / 0.4
  CHECK(data::to_original_point(2, 5, g) == Point{0, 0});       // left of and above the image
  CHECK(data::to_original_point(404, 60, g) == Point{200, 100});
}

TEST_CASE("to_original_rbox: centre minus the padding, centre and sides over each axis's gain") {
  data::ImageGeometry g{100, 200, 0.5, 0.25, 10.0, 4.0};
  const auto r = data::to_original_rbox({60, 24, 20, 8, 0.7}, g);
  CHECK(r.cx == doctest::Approx(100.0));  // (60 - 10) / 0.5
  CHECK(r.cy == doctest::Approx(80.0));   // (24 - 4) / 0.25
  CHECK(r.w == doctest::Approx(40.0));
  CHECK(r.h == doctest::Approx(32.0));
  CHECK(r.angle == doctest::Approx(0.7));
}
TEST_CASE("masks_to_original: the letterbox window, bilinear resize, bytes truncated") {
  // An 8 (h) x 4 (w) original letterboxed into 16 x 16 at gain 2: padding 4 left and right.
  data::ImageGeometry g{8, 4, 2.0, 2.0, 4.0, 0.0};
  auto masks = torch::zeros({2, 16, 16}, torch::kUInt8);
  masks[0].narrow(1, 4, 4).fill_(1);  // window columns 0..3 of 8: output columns 0, 1 (exact)
  masks[1].narrow(1, 4, 3).fill_(1);  // columns 0..2: output column 1 reads 0.5 -> 0
  const auto out = data::masks_to_original(masks, g);
  CHECK(out.sizes() == torch::IntArrayRef{2, 8, 4});
  CHECK(out[0].sum().item<int64_t>() == 16);
  CHECK(out[0].select(1, 1).sum().item<int64_t>() == 8);
  CHECK(out[1].sum().item<int64_t>() == 8);
  CHECK(out[1].select(1, 1).sum().item<int64_t>() == 0);
}
