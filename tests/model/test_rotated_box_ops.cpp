// Tensor ProbIoU against the scalar geometry::probiou (itself checked against the reference's
// values), and the rotated distance encoding by hand and as a round trip.
#include <doctest/doctest.h>

#include <torch/torch.h>

#include <cmath>

#include "geometry/rotated_box.h"
#include "model/rotated_box_ops.h"

using namespace trainer;
using doctest::Approx;

namespace {
constexpr double kPi = 3.14159265358979323846;

geometry::RotatedBox row(const torch::Tensor& boxes, int64_t i) {
  const auto b = boxes[i];
  return {b[0].item<double>(), b[1].item<double>(), b[2].item<double>(), b[3].item<double>(),
          b[4].item<double>()};
}

torch::Tensor random_boxes(int64_t n, uint64_t seed) {
  torch::manual_seed(seed);
  auto o = torch::TensorOptions().dtype(torch::kFloat64);
  return torch::cat({torch::rand({n, 2}, o) * 20, torch::rand({n, 2}, o) * 10 + 0.5,
                     (torch::rand({n, 1}, o) - 0.5) * 2 * kPi},
                    1);
}
}  // namespace

TEST_CASE("rotated box ops: element-wise and pairwise ProbIoU equal the scalar form") {
  const torch::Tensor a = random_boxes(40, 1), b = random_boxes(30, 2);
  const torch::Tensor pairs = model::batch_probiou(a, b);
  REQUIRE(pairs.sizes() == torch::IntArrayRef({40, 30}));
  for (int64_t i = 0; i < 40; i += 7) {
    for (int64_t j = 0; j < 30; j += 5) {
      CHECK(pairs[i][j].item<double>() ==
            Approx(geometry::probiou(row(a, i), row(b, j))).epsilon(1e-12));
    }
  }
  const torch::Tensor same = model::probiou(a.slice(0, 0, 30), b, 0.01);
  REQUIRE(same.sizes() == torch::IntArrayRef({30}));
  for (int64_t i = 0; i < 30; i += 3) {
    CHECK(same[i].item<double>() ==
          Approx(geometry::probiou(row(a, i), row(b, i), 0.01)).epsilon(1e-12));
  }
  // The reference's value for one pair (ultralytics.utils.metrics.probiou, float64).
  const auto o = torch::TensorOptions().dtype(torch::kFloat64);
  CHECK(model::probiou(torch::tensor({0.0, 0.0, 4.0, 2.0, 0.5}, o),
                       torch::tensor({1.0, 2.0, 3.0, 1.0, -0.4}, o))
            .item<double>() == Approx(0.0958118088629506).epsilon(1e-12));
}

TEST_CASE("rotated box ops: dist2rbox by hand and rbox2dist as its inverse") {
  const auto o = torch::TensorOptions().dtype(torch::kFloat64);
  const torch::Tensor anchor = torch::tensor({5.0, 5.0}, o);
  const torch::Tensor ltrb = torch::tensor({1.0, 2.0, 3.0, 4.0}, o);
  // Angle 0: (xf, yf) = ((3 - 1) / 2, (4 - 2) / 2) = (1, 1): centre (6, 6), w 4, h 6.
  torch::Tensor box = model::dist2rbox(ltrb, torch::zeros({1}, o), anchor);
  CHECK(box[0].item<double>() == Approx(6));
  CHECK(box[1].item<double>() == Approx(6));
  CHECK(box[2].item<double>() == Approx(4));
  CHECK(box[3].item<double>() == Approx(6));
  // Angle pi/2: the offset (1, 1) turns to (-1, 1): centre (4, 6).
  box = model::dist2rbox(ltrb, torch::full({1}, kPi / 2, o), anchor);
  CHECK(box[0].item<double>() == Approx(4));
  CHECK(box[1].item<double>() == Approx(6));
  // Round trip over random boxes and anchors near them.
  const torch::Tensor boxes = random_boxes(25, 3);
  const torch::Tensor anchors = boxes.slice(1, 0, 2) + (torch::rand({25, 2}, o) - 0.5);
  const torch::Tensor d = model::rbox2dist(boxes, anchors, 1);
  const torch::Tensor back = model::dist2rbox(d, boxes.slice(1, 4, 5), anchors);
  CHECK(torch::allclose(back, boxes.slice(1, 0, 4), 1e-12, 1e-12));
  // DFL targets are clamped to [0, reg_max - 1 - 0.01].
  const torch::Tensor far = torch::tensor({{0.0, 0.0, 100.0, 2.0, 0.0}}, o);
  const torch::Tensor clamped = model::rbox2dist(far, torch::tensor({{0.0, 0.0}}, o), 16);
  CHECK(clamped[0][0].item<double>() == Approx(14.99));
  CHECK(clamped[0][1].item<double>() == Approx(1.0));
}
