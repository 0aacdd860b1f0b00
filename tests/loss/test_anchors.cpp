// Anchors and strides at 640 (model/anchors.h, shared by the decoder and the loss), and the
// loss's ltrb <-> box conversions.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "loss/anchors.h"

using namespace trainer::loss;
using trainer::model::make_anchors;

TEST_CASE("anchors and strides at 640: 8400 cell centres, level by level") {
  // P3/P4/P5 maps of a 640 input: 80 x 80, 40 x 40, 20 x 20 -> 6400 + 1600 + 400 = 8400.
  std::vector<torch::Tensor> feats = {torch::zeros({1, 1, 80, 80}), torch::zeros({1, 1, 40, 40}),
                                      torch::zeros({1, 1, 20, 20})};
  const auto a = make_anchors(feats, {8, 16, 32}, 0.5);
  REQUIRE(a.points.sizes() == torch::IntArrayRef({8400, 2}));
  REQUIRE(a.strides.sizes() == torch::IntArrayRef({8400, 1}));
  auto pt = [&](int64_t i) {
    return std::make_pair(a.points[i][0].item<float>(), a.points[i][1].item<float>());
  };
  CHECK(pt(0) == std::make_pair(0.5f, 0.5f));       // first centre, stride 8 (pixel 4, 4)
  CHECK(pt(1) == std::make_pair(1.5f, 0.5f));       // x runs fastest
  CHECK(pt(80) == std::make_pair(0.5f, 1.5f));      // second row
  CHECK(pt(6399) == std::make_pair(79.5f, 79.5f));  // last P3 centre (pixel 636)
  CHECK(pt(6400) == std::make_pair(0.5f, 0.5f));    // first P4 centre
  CHECK(pt(8399) == std::make_pair(19.5f, 19.5f));  // last centre, pixel 19.5 x 32 = 624
  CHECK(a.strides[0].item<float>() == 8.0f);
  CHECK(a.strides[6399].item<float>() == 8.0f);
  CHECK(a.strides[6400].item<float>() == 16.0f);
  CHECK(a.strides[7999].item<float>() == 16.0f);
  CHECK(a.strides[8000].item<float>() == 32.0f);
  CHECK(a.strides[8399].item<float>() == 32.0f);
  CHECK((a.points.scalar_type() == torch::kFloat));
  // The loss asks for fp32 anchors even when the head ran in bf16.
  std::vector<torch::Tensor> half = {torch::zeros({1, 1, 80, 80}, torch::kBFloat16)};
  const auto c = make_anchors(half, {8}, 0.5, torch::kFloat);
  CHECK((c.points.scalar_type() == torch::kFloat));
  CHECK(c.points[6399][0].item<float>() == 79.5f);
  // Non-square maps: 2 rows x 3 columns.
  const auto b = make_anchors({{2, 3}}, {8}, 0.5, torch::kCPU);
  CHECK(torch::equal(
      b.points,
      torch::tensor(
          {{0.5f, 0.5f}, {1.5f, 0.5f}, {2.5f, 0.5f}, {0.5f, 1.5f}, {1.5f, 1.5f}, {2.5f, 1.5f}})));
  CHECK_THROWS_AS(make_anchors({{2, 3}}, {8, 16}, 0.5, torch::kCPU), std::invalid_argument);
}

TEST_CASE("dist_to_bbox and bbox_to_dist, with the DFL clamp") {
  const auto point = torch::tensor({5.5f, 3.5f});
  const auto ltrb = torch::tensor({1.0f, 2.0f, 3.0f, 4.0f});
  // x1 = 5.5 - 1, y1 = 3.5 - 2, x2 = 5.5 + 3, y2 = 3.5 + 4.
  CHECK(torch::equal(dist_to_bbox(ltrb, point), torch::tensor({4.5f, 1.5f, 8.5f, 7.5f})));
  // centre ((4.5 + 8.5) / 2, (1.5 + 7.5) / 2) = (6.5, 4.5), size 4 x 6.
  CHECK(torch::equal(dist_to_bbox(ltrb, point, /*xywh=*/true),
                     torch::tensor({6.5f, 4.5f, 4.0f, 6.0f})));
  CHECK(torch::equal(bbox_to_dist(point, torch::tensor({4.5f, 1.5f, 8.5f, 7.5f})), ltrb));
  // A box reaching 20 cells left and beyond the anchor on the right: l = 20 -> 14.99, r = -1 -> 0.
  const auto far = bbox_to_dist(point, torch::tensor({-14.5f, 1.5f, 4.5f, 7.5f}), 16 - 1 - 0.01);
  CHECK(far[0].item<float>() == doctest::Approx(14.99f));
  CHECK(far[2].item<float>() == 0.0f);
  CHECK(far[3].item<float>() == 4.0f);
}
