// COCO RLE by hand: small masks whose runs, compressed strings, areas, boxes, polygon rasters and
// IoUs are worked out below (each value was also checked once against pycocotools.mask;
// test_pycocotools_segm.cpp compares the same operations on coco128's real polygons).
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "eval/rle.h"

using namespace trainer::eval;

namespace {

// Row-major 3 x 4:     column-major (x outer): 0 0 1 | 1 1 1 | 1 0 0 | 0 0 0
//   0 1 1 0            runs: 2 background, 5 foreground, 5 background
//   0 1 0 0
//   1 1 0 0
const std::vector<uint8_t> kMask = {0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0};

}  // namespace

TEST_CASE("rle: encode counts column-major runs, background first, and decode inverts it") {
  const Rle r = rle_encode(kMask.data(), 3, 4);
  CHECK(r.height == 3);
  CHECK(r.width == 4);
  CHECK(r.counts == std::vector<uint32_t>{2, 5, 5});
  CHECK(rle_decode(r) == kMask);
  CHECK(rle_area(r) == 5);
  CHECK(rle_pixels(r) == 12);
  // A first pixel in the foreground starts with an empty background run.
  const std::vector<uint8_t> full = {1, 1, 1, 1};
  CHECK(rle_encode(full.data(), 2, 2).counts == std::vector<uint32_t>{0, 4});
  const std::vector<uint8_t> none = {0, 0, 0, 0, 0, 0};
  CHECK(rle_encode(none.data(), 2, 3).counts == std::vector<uint32_t>{6});
  CHECK(rle_encode(nullptr, 0, 5).counts == std::vector<uint32_t>{0});  // maskApi's empty mask
  // Any non-zero byte is foreground (a 0/255 mask from an image).
  std::vector<uint8_t> bytes = kMask;
  for (uint8_t& v : bytes) v *= 255;
  CHECK(rle_encode(bytes.data(), 3, 4).counts == std::vector<uint32_t>{2, 5, 5});
  // Counts that do not cover the size are refused.
  CHECK_THROWS_AS(rle_decode(Rle{3, 4, {2, 5}}), std::invalid_argument);
}

TEST_CASE("rle: the compressed string, character by character") {
  // Fewer than 4 counts: each is its own value; 2 -> '2' (50), 5 -> '5'.
  CHECK(rle_to_string(rle_encode(kMask.data(), 3, 4)) == "255");
  // [5, 40, 3, 100, 2]: 5 -> '5'; 40 = 8 + 1 * 32 -> (8 | 0x20) + 48 = 'X', then 1 -> '1';
  // 3 -> '3'; from the 4th on, the difference to the count two back: 100 - 40 = 60 = 28 + 1 * 32
  // -> (28 | 0x20) + 48 = 'l', '1'; 2 - 3 = -1 -> 31 with the sign bit 0x10 and nothing left ->
  // 'O' (79).
  const Rle r{10, 15, {5, 40, 3, 100, 2}};
  CHECK(rle_to_string(r) == "5X13l1O");
  const Rle back = rle_from_string("5X13l1O", 10, 15);
  CHECK(back.counts == r.counts);
  CHECK(back.height == 10);
  CHECK(back.width == 15);
  // pycocotools' string for the 6 x 6 square of the polygon test below.
  CHECK(rle_from_string("733000;", 6, 6).counts == std::vector<uint32_t>{7, 3, 3, 3, 3, 3, 14});
  CHECK(rle_from_string("", 0, 0).counts.empty());
  // Outside '0'..'o', a number cut off by the end, a negative count: refused.
  CHECK_THROWS_AS(rle_from_string("5 3", 10, 15), std::invalid_argument);
  CHECK_THROWS_AS(rle_from_string("5X", 10, 15), std::invalid_argument);
  CHECK_THROWS_AS(rle_from_string("O", 10, 15), std::invalid_argument);  // -1
}

TEST_CASE("rle: string round trips over large and alternating counts") {
  Rle r{1000, 1000, {}};
  uint32_t total = 0;
  for (uint32_t c : {0u, 7u, 123456u, 1u, 99999u, 31u, 32u, 15u, 16u, 17u, 500000u}) {
    r.counts.push_back(c);
    total += c;
  }
  r.counts.push_back(1000u * 1000u - total);
  const Rle back = rle_from_string(rle_to_string(r), 1000, 1000);
  CHECK(back.counts == r.counts);
  CHECK(rle_decode(back) == rle_decode(r));
}

TEST_CASE("rle: toBbox covers whole pixels, a run across a column spans the full height") {
  CHECK(rle_to_bbox(rle_encode(kMask.data(), 3, 4)) == std::array<double, 4>{0, 0, 3, 3});
  // 6 x 6, pixels (x 1..3, y 1..3): runs start at 7, 13, 19, each 3 long, inside one column.
  const Rle square{6, 6, {7, 3, 3, 3, 3, 3, 14}};
  CHECK(rle_to_bbox(square) == std::array<double, 4>{1, 1, 3, 3});
  // One pixel at x 2, y 5 of a 6 x 6 mask: position 2 * 6 + 5 = 17.
  CHECK(rle_to_bbox(Rle{6, 6, {17, 1, 18}}) == std::array<double, 4>{2, 5, 1, 1});
  // A run from (x 0, y 5) to (x 1, y 0) crosses a column: y spans 0..5.
  CHECK(rle_to_bbox(Rle{6, 6, {5, 2, 29}}) == std::array<double, 4>{0, 0, 2, 6});
  // No foreground run at all (fewer than 2 counts): zeros.
  CHECK(rle_to_bbox(Rle{6, 6, {36}}) == std::array<double, 4>{0, 0, 0, 0});
}

TEST_CASE("rle: a polygon rasterised as maskApi's rleFrPoly does") {
  // The square (1, 1)-(4, 4) on the 5x grid is (5, 5)-(20, 20). Its top edge walked left to right
  // enters grid columns 7, 12, 17, i.e. pixel columns x = (7 + .5) / 5 - .5 = 1, 2, 3, at grid
  // row 20 -> y = ceil(20.5 / 5 - .5) = 4; the bottom edge walked back crosses the same columns
  // at grid row 5 -> y = ceil(0.6) = 1. Boundaries x * 6 + y: 7, 10, 13, 16, 19, 22 and the end
  // 36 -> runs 7, 3, 3, 3, 3, 3, 14: pixels x 1..3, y 1..3, 9 of them.
  const Rle square = rle_from_polygon({1, 1, 1, 4, 4, 4, 4, 1}, 6, 6);
  CHECK(square.counts == std::vector<uint32_t>{7, 3, 3, 3, 3, 3, 14});
  CHECK(rle_area(square) == 9);
  CHECK(rle_to_string(square) == "733000;");
  // The same square from its box [x, y, w, h], and from the corners in the other direction.
  CHECK(rle_from_bbox({1, 1, 3, 3}, 6, 6).counts == square.counts);
  CHECK(rle_from_polygon({1, 1, 4, 1, 4, 4, 1, 4}, 6, 6).counts == square.counts);
  // Half outside on the left: x = -2 scales to (int)(-9.5) = -9 (towards zero, as C casts);
  // columns -2 and -1 are dropped, 0 and 1 stay: 2 x 3 pixels, runs 1, 3, 3, 3, 26.
  const Rle clipped = rle_from_polygon({-2, 1, -2, 4, 2, 4, 2, 1}, 6, 6);
  CHECK(clipped.counts == std::vector<uint32_t>{1, 3, 3, 3, 26});
  CHECK(rle_area(clipped) == 6);
  CHECK(rle_to_string(clipped) == "1330g0");
  // Entirely outside the image, or a 2-point line: no pixel.
  CHECK(rle_from_polygon({10, 10, 12, 10, 12, 12}, 6, 6).counts == std::vector<uint32_t>{36});
  CHECK(rle_area(rle_from_polygon({1, 1, 4, 4}, 6, 6)) == 0);
}

TEST_CASE("rle: merge is the union (or intersection) of the runs") {
  const Rle a = rle_from_polygon({1, 1, 1, 4, 4, 4, 4, 1}, 6, 6);  // x 1..3, y 1..3
  const Rle b = rle_from_polygon({2, 1, 2, 4, 5, 4, 5, 1}, 6, 6);  // x 2..4, y 1..3
  const Rle u = rle_merge(std::vector<Rle>{a, b});
  CHECK(rle_area(u) == 12);
  CHECK(u.counts == std::vector<uint32_t>{7, 3, 3, 3, 3, 3, 3, 3, 8});
  const Rle i = rle_merge(std::vector<Rle>{a, b}, true);
  CHECK(rle_area(i) == 6);
  CHECK(i.counts == std::vector<uint32_t>{13, 3, 3, 3, 14});
  CHECK(rle_merge(std::vector<Rle>{a}).counts == a.counts);
  CHECK(rle_merge(std::vector<Rle>{}).counts.empty());
  // Different sizes: maskApi gives an empty 0 x 0 RLE.
  const Rle other = rle_from_polygon({1, 1, 1, 4, 4, 4, 4, 1}, 7, 6);
  CHECK(rle_merge(std::vector<Rle>{a, other}).height == 0);
}

TEST_CASE("rle: IoU on the runs, over the detection's area for crowd ground truth") {
  const Rle a = rle_from_polygon({1, 1, 1, 4, 4, 4, 4, 1}, 6, 6);  // 9 pixels
  const Rle b = rle_from_polygon({2, 1, 2, 4, 5, 4, 5, 1}, 6, 6);  // 9 pixels, 6 shared
  const auto ab = rle_iou({a}, {b}, {0});
  CHECK(ab == std::vector<double>{6.0 / 12.0});
  CHECK(rle_iou({a}, {b}, {1}) == std::vector<double>{6.0 / 9.0});
  // The crowd rule divides by the detection's area: a small detection inside a big crowd is 1.
  const Rle big = rle_from_polygon({0, 0, 0, 6, 6, 6, 6, 0}, 6, 6);
  CHECK(rle_iou({a}, {big}, {1}) == std::vector<double>{1.0});
  CHECK(rle_iou({a}, {big}, {0}) == std::vector<double>{9.0 / 36.0});
  // Disjoint masks, an empty mask, masks of another size (maskApi's -1 when the boxes overlap).
  const Rle far = rle_from_polygon({4, 4, 4, 6, 6, 6, 6, 4}, 6, 6);
  CHECK(rle_iou({a}, {far}, {0}) == std::vector<double>{0.0});
  CHECK(rle_iou({Rle{6, 6, {36}}}, {a}, {0}) == std::vector<double>{0.0});
  const Rle bigger = rle_from_polygon({1, 1, 1, 4, 4, 4, 4, 1}, 7, 6);
  CHECK(rle_iou({bigger}, {a}, {0}) == std::vector<double>{-1.0});
  // [d][g], row-major.
  CHECK(rle_iou({a, b}, {a, b, big}, {0, 0, 1}) ==
        std::vector<double>{1.0, 0.5, 1.0, 0.5, 1.0, 1.0});
}
