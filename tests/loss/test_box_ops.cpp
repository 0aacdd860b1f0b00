// Box conversions and the IoU family against hand-computed decimals (double precision, so the
// reference's eps = 1e-7 placement shows in the digits).
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "loss/box_ops.h"

using namespace trainer::loss;

namespace {
torch::Tensor box(std::initializer_list<double> v) {
  return torch::tensor(std::vector<double>(v), torch::kDouble);
}
double iou_of(IouKind kind, std::initializer_list<double> a, std::initializer_list<double> b,
              bool xyxy = true) {
  return bbox_iou(box(a), box(b), kind, xyxy).item<double>();
}
}  // namespace

TEST_CASE("xywh and xyxy conversions") {
  const auto xyxy = xywh_to_xyxy(box({10, 20, 4, 6}));  // centre (10, 20), 4 x 6
  CHECK(torch::equal(xyxy, box({8, 17, 12, 23})));
  CHECK(torch::equal(xyxy_to_xywh(xyxy), box({10, 20, 4, 6})));
}

TEST_CASE("IoU family of two offset squares [0,0,4,4] and [2,2,6,6]") {
  // e = 1e-7 is added to both heights: areas 4 (4 + e) each, inter 2 x 2 = 4,
  // union = 2 (16 + 4e) - 4 + e = 28 + 9e, IoU = 4 / 28.0000009 = 0.14285713826530624.
  const double iou = 4.0 / 28.0000009;
  CHECK(iou_of(IouKind::kIou, {0, 0, 4, 4}, {2, 2, 6, 6}) == doctest::Approx(iou).epsilon(1e-12));
  CHECK(iou == doctest::Approx(0.14285713826530624).epsilon(1e-12));
  // GIoU: enclosing 6 x 6, C = 36 + e: IoU - (C - union) / C = -0.07936506111740979.
  CHECK(iou_of(IouKind::kGiou, {0, 0, 4, 4}, {2, 2, 6, 6}) ==
        doctest::Approx(-0.07936506111740979).epsilon(1e-12));
  // DIoU: c2 = 6^2 + 6^2 + e, rho2 = ((8 - 4)^2 + (8 - 4)^2) / 4 = 8: IoU - 8 / 72.0000001.
  CHECK(iou_of(IouKind::kDiou, {0, 0, 4, 4}, {2, 2, 6, 6}) ==
        doctest::Approx(0.03174602730851611).epsilon(1e-12));
  // CIoU: equal aspect ratios, v = 0, so CIoU = DIoU.
  CHECK(iou_of(IouKind::kCiou, {0, 0, 4, 4}, {2, 2, 6, 6}) ==
        doctest::Approx(0.03174602730851611).epsilon(1e-12));
}

TEST_CASE("CIoU aspect term of a wide [0,0,4,2] and a tall [1,0,3,4] box") {
  // w1 = 4, h1 = 2 + e, w2 = 2, h2 = 4 + e; inter 2 x 2 = 4; union = 4h1 + 2h2 - 4 + e = 12 + 7e;
  // IoU = 4 / 12.0000007 = 0.33333331388889004.
  CHECK(iou_of(IouKind::kIou, {0, 0, 4, 2}, {1, 0, 3, 4}) ==
        doctest::Approx(0.33333331388889004).epsilon(1e-12));
  // GIoU: C = 4 x 4 + e = 16 + e: IoU - (4 - 6e) / (16 + e) = 0.08333335295138969.
  CHECK(iou_of(IouKind::kGiou, {0, 0, 4, 2}, {1, 0, 3, 4}) ==
        doctest::Approx(0.08333335295138969).epsilon(1e-12));
  // rho2 = ((4 - 4)^2 + (4 - 2)^2) / 4 = 1, c2 = 32 + e.
  // v = 4/pi^2 (atan(2 / (4 + e)) - atan(4 / (2 + e)))^2 = 0.16782584076113882,
  // alpha = v / (v - IoU + 1 + e) = 0.20111123257034008,
  // CIoU = IoU - 1 / (32 + e) - v alpha = 0.26833165229392003.
  CHECK(iou_of(IouKind::kCiou, {0, 0, 4, 2}, {1, 0, 3, 4}) ==
        doctest::Approx(0.26833165229392003).epsilon(1e-12));
  CHECK(iou_of(IouKind::kCiou, {1, 0, 3, 4}, {0, 0, 4, 2}) ==
        doctest::Approx(0.26833165229392003).epsilon(1e-12));  // symmetric
}

TEST_CASE("xywh input adds no eps to the heights, and disjoint boxes have IoU 0") {
  // [cx, cy, w, h] = (2, 2, 4, 4) and (4, 4, 4, 4): inter 4, union 16 + 16 - 4 + e.
  CHECK(iou_of(IouKind::kIou, {2, 2, 4, 4}, {4, 4, 4, 4}, /*xyxy=*/false) ==
        doctest::Approx(4.0 / 28.0000001).epsilon(1e-12));
  CHECK(iou_of(IouKind::kIou, {0, 0, 1, 1}, {2, 2, 3, 3}) == 0.0);
  // GIoU of disjoint unit squares 1 apart diagonally: C = 9 + e, union = 2 + 3e:
  // -(9 + e - 2 - 3e) / (9 + e) = -0.7777777...
  CHECK(iou_of(IouKind::kGiou, {0, 0, 1, 1}, {2, 2, 3, 3}) ==
        doctest::Approx(-(9 - 2 - 2e-7) / (9 + 1e-7)).epsilon(1e-12));
}

TEST_CASE("CIoU broadcasts and its alpha carries no gradient") {
  auto pred = torch::tensor({{0.0, 0.0, 4.0, 2.0}, {0.5, 0.0, 4.0, 3.0}}, torch::kDouble)
                  .requires_grad_(true);
  const auto target = box({1, 0, 3, 4});
  const auto ciou = bbox_iou(pred, target, IouKind::kCiou);
  CHECK(ciou.sizes() == torch::IntArrayRef({2, 1}));
  ciou.sum().backward();
  // Finite differences of IoU - rho2/c2 - v * alpha_fixed must match the autograd gradient
  // only when alpha is held constant; check one coordinate numerically.
  const double h = 1e-6;
  auto at = [&](double x2) {
    auto p = box({0, 0, x2, 2});
    const double e = 1e-7;
    const double w1 = x2, h1 = 2 + e, w2 = 2, h2 = 4 + e;
    const auto iou = bbox_iou(p, target, IouKind::kIou).item<double>();
    const double cw = std::max(x2, 3.0) - 0.0, ch = 4.0;
    const double c2 = cw * cw + ch * ch + e;
    const double rho2 = (std::pow(1 + 3 - 0 - x2, 2) + std::pow(0 + 4 - 0 - 2, 2)) / 4;
    const double v = 4 / (M_PI * M_PI) * std::pow(std::atan(w2 / h2) - std::atan(w1 / h1), 2);
    return std::make_pair(iou - rho2 / c2, v);
  };
  const auto [d0, v0] = at(4.0);
  const double alpha =
      v0 / (v0 - bbox_iou(box({0, 0, 4, 2}), target, IouKind::kIou).item<double>() + 1 + 1e-7);
  const auto [dp, vp] = at(4.0 + h);
  const auto [dm, vm] = at(4.0 - h);
  const double numeric = ((dp - vp * alpha) - (dm - vm * alpha)) / (2 * h);
  CHECK(pred.grad()[0][2].item<double>() == doctest::Approx(numeric).epsilon(1e-6));
  (void)d0;
}
