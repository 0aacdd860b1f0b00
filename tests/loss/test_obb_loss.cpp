// The OBB loss: rotated candidates (hand-computed, with and without STAL), the angle loss, the
// rotated targets with the 2 px filter, the ProbIoU overlap in the assignment, the items of both
// families with and without foreground, and a learning test on drawn rotated bars.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <opencv2/imgproc.hpp>

#include <cmath>

#include "loss/gt_targets.h"
#include "loss/obb_head_loss.h"
#include "loss/obb_loss.h"
#include "model/rotated_box_ops.h"
#include "model/yolo_model.h"

using namespace trainer;
using namespace trainer::loss;
using doctest::Approx;

namespace {

// 4 x 4 anchors of stride 8: centres 4, 12, 20, 28; index = row * 4 + column.
torch::Tensor obb_grid_points() {
  std::vector<float> xy;
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) xy.insert(xy.end(), {4.0f + 8 * x, 4.0f + 8 * y});
  }
  return torch::tensor(xy).view({16, 2});
}

std::vector<int64_t> obb_positives(const torch::Tensor& row) {
  std::vector<int64_t> out;
  const auto nz = row.nonzero().flatten();
  for (int64_t i = 0; i < nz.size(0); ++i) out.push_back(nz[i].item<int64_t>());
  return out;
}

}  // namespace

TEST_CASE("rotated candidates: the anchor inside the rotated box, STAL raising thin sides") {
  const auto points = obb_grid_points();
  // A 20 x 20 box at (16, 16), angle 0: x and y in [6, 26] -> anchors (12|20, 12|20).
  auto in = select_candidates_in_rotated_gts(
      points, torch::tensor({16.0f, 16.0f, 20.0f, 20.0f, 0.0f}).view({1, 1, 5}),
      torch::ones({1, 1, 1}, torch::kBool), 16);
  CHECK(obb_positives(in[0][0]) == std::vector<int64_t>{5, 6, 9, 10});
  // A 34 x 4 bar at (16, 16) turned by 45 degrees. With u, v along and across it, an anchor is
  // inside when |u| <= 17 and |v| <= h / 2. STAL raises h = 4 to 16: |v| <= 8 holds the diagonal
  // (u = +-16.97 at the corners) and the anchors one step off it (|v| = 5.66):
  // 0, 1, 4, 5, 6, 9, 10, 11, 14, 15. A padding row is not raised: |v| <= 2 is the diagonal only.
  const auto bar = torch::tensor({16.0f, 16.0f, 34.0f, 4.0f, static_cast<float>(M_PI / 4)});
  in = select_candidates_in_rotated_gts(points, bar.view({1, 1, 5}),
                                        torch::ones({1, 1, 1}, torch::kBool), 16);
  CHECK(obb_positives(in[0][0]) == std::vector<int64_t>{0, 1, 4, 5, 6, 9, 10, 11, 14, 15});
  in = select_candidates_in_rotated_gts(points, bar.view({1, 1, 5}),
                                        torch::zeros({1, 1, 1}, torch::kBool), 16);
  CHECK(obb_positives(in[0][0]) == std::vector<int64_t>{0, 5, 10, 15});
}

TEST_CASE("angle loss: sin^2(2 dw) with the aspect weight, periodic in pi") {
  const auto one = torch::ones({1});
  auto loss = [&](double pred, double gt, double w, double h) {
    return angle_loss(torch::tensor({pred}), torch::tensor({gt}), torch::tensor({w}),
                      torch::tensor({h}), torch::ones({1}, torch::kDouble), one.to(torch::kDouble))
        .item<double>();
  };
  CHECK(loss(0, M_PI / 4, 2, 2) == Approx(1.0));             // sin^2(-pi/2), square
  CHECK(loss(M_PI, 0, 2, 2) == Approx(0.0).epsilon(1e-12));  // a turn by pi is the same box
  CHECK(loss(0.1, 0.1 + M_PI, 2, 2) == Approx(0.0).epsilon(1e-12));
  CHECK(loss(0, M_PI / 4, std::exp(3.0), 1) == Approx(std::exp(-1.0)));  // ln(w/h) = 3: e^-1
  CHECK(loss(0, M_PI / 8, 1, 1) == Approx(0.5));                         // sin^2(pi/4)
  // Weighted by each anchor's score sum and normalised by the target score sum.
  const auto two = angle_loss(torch::tensor({0.0, 0.0}), torch::tensor({M_PI / 4, M_PI / 8}),
                              torch::ones({2}, torch::kDouble), torch::ones({2}, torch::kDouble),
                              torch::tensor({0.5, 1.0}), torch::tensor(4.0));
  CHECK(two.item<double>() == Approx((0.5 * 1.0 + 1.0 * 0.5) / 4));
}

TEST_CASE("pack_rotated_targets: pixels, the angle kept, boxes under 2 px dropped") {
  const auto labels = torch::tensor({{0.0f, 1.0f, 0.5f, 0.5f, 0.2f, 0.1f},
                                     {1.0f, 0.0f, 0.25f, 0.5f, 0.1f, 0.1f},
                                     {1.0f, 2.0f, 0.5f, 0.5f, 0.01f, 0.1f}});
  const auto rboxes = torch::tensor({{0.5f, 0.5f, 0.25f, 0.125f, 0.5f},
                                     {0.25f, 0.5f, 0.125f, 0.0625f, -0.5f},
                                     {0.5f, 0.5f, 1.0f / 64, 0.5f, 0.0f}});  // 1 px wide
  const auto gt = pack_rotated_targets(labels, rboxes, 2, 3, 64, 64, torch::kCPU);
  CHECK(gt.bboxes.sizes() == torch::IntArrayRef{2, 1, 5});
  CHECK(torch::allclose(gt.bboxes[0][0], torch::tensor({32.0f, 32.0f, 16.0f, 8.0f, 0.5f})));
  CHECK(torch::allclose(gt.bboxes[1][0], torch::tensor({16.0f, 32.0f, 8.0f, 4.0f, -0.5f})));
  CHECK(gt.labels[0][0][0].item<float>() == 1.0f);
  CHECK(gt.labels[1][0][0].item<float>() == 0.0f);
  CHECK(gt.mask.all().item<bool>());
  CHECK_THROWS_WITH_AS(pack_rotated_targets(labels, torch::Tensor(), 2, 3, 64, 64, torch::kCPU),
                       doctest::Contains("is this an OBB dataset?"), std::invalid_argument);
}

TEST_CASE("obb loss: four finite items for both families, zero box terms without objects") {
  for (const auto family : {model::ModelFamily::kYolo26, model::ModelFamily::kYolo11}) {
    CAPTURE(static_cast<int>(family));
    torch::manual_seed(1);
    auto net = model::build_tiny_yolo_model(family, 3, core::Task::kObb);
    net->train();
    const auto out = net->forward_for_loss(torch::rand({2, 3, 64, 64}));
    ObbLoss loss(3, net->reg_max(), net->strides(), {}, 1.0, net->end2end());
    CHECK(loss.item_names() == std::vector<std::string>{"box_loss", "cls_loss",
                                                        net->reg_max() > 1 ? "dfl_loss" : "l1_loss",
                                                        "angle_loss"});
    LossTargets targets;
    targets.labels =
        torch::tensor({{0.0f, 1.0f, 0.5f, 0.5f, 0.5f, 0.3f}, {1.0f, 2.0f, 0.3f, 0.6f, 0.3f, 0.3f}});
    targets.rboxes =
        torch::tensor({{0.5f, 0.5f, 0.45f, 0.2f, 0.3f}, {0.3f, 0.6f, 0.3f, 0.15f, 1.2f}});
    const auto r = loss(out, targets, 2);
    REQUIRE(r.items.sizes() == torch::IntArrayRef{4});
    CHECK(torch::isfinite(r.items).all().item<bool>());
    CHECK(r.items[0].item<float>() > 0);
    CHECK(r.items[3].item<float>() >= 0);
    r.total.backward();
    const auto angle_grad = net->obb_head()->angle_output(0)->weight.grad();
    REQUIRE(angle_grad.defined());
    CHECK(angle_grad.abs().sum().item<float>() > 0);
    // No objects: only the class term; the graph still reaches the angle tower.
    net->zero_grad();
    const auto out2 = net->forward_for_loss(torch::rand({2, 3, 64, 64}));
    LossTargets none;
    none.labels = torch::zeros({0, 6});
    none.rboxes = torch::zeros({0, 5});
    const auto empty = loss(out2, none, 2);
    CHECK(empty.items[0].item<float>() == 0.0f);
    CHECK(empty.items[2].item<float>() == 0.0f);
    CHECK(empty.items[3].item<float>() == 0.0f);
    CHECK(empty.items[1].item<float>() > 0);
    empty.total.backward();
    CHECK(net->obb_head()->angle_output(0)->weight.grad().defined());
  }
}

TEST_CASE("obb assignment: a prediction equal to the GT gets ProbIoU 1 as its target score") {
  // One anchor's prediction is made the GT itself through the raw outputs; its overlap (ProbIoU)
  // is ~1, so the normalised target score of the best anchor is ~1.
  torch::manual_seed(2);
  auto net = model::build_tiny_yolo_model(model::ModelFamily::kYolo26, 1, core::Task::kObb);
  net->train();
  const auto out = net->forward_for_loss(torch::rand({1, 3, 64, 64}));
  ObbHeadLoss head(1, 1, net->strides(), {}, 1.0, 10);
  auto p = head.parse(out.one2many, out.one2many_angle);
  // GT: at anchor 0 of level 0 (centre (0.5, 0.5) grid units = (4, 4) px) a 16 x 8 px box, angle
  // 0.25; set that anchor's prediction to the same box in grid units.
  const auto gt_box = torch::tensor({4.0f, 4.0f, 16.0f, 8.0f, 0.25f});
  {
    torch::NoGradGuard no_grad;
    p.pred_rboxes[0][0] = torch::tensor({0.5f, 0.5f, 2.0f, 1.0f, 0.25f});
    p.head.pred_scores[0][0][0] = 10.0f;
  }
  GtTargets gt;
  gt.labels = torch::zeros({1, 1, 1});
  gt.bboxes = gt_box.view({1, 1, 5});
  gt.mask = torch::ones({1, 1, 1}, torch::kBool);
  const auto a = head.assign(p, gt);
  CHECK(a.fg_mask[0][0].item<bool>());
  // ProbIoU of a box with itself is 1 - sqrt(~2 eps) = 0.9995 (the Bhattacharyya distance is
  // clamped at eps = 1e-7, as the reference clamps it).
  const float self = model::probiou(gt_box.view({1, 5}), gt_box.view({1, 5}))[0].item<float>();
  CHECK(self == Approx(1.0).epsilon(1e-3));
  CHECK(a.target_scores[0][0][0].item<float>() == Approx(self).epsilon(1e-4));
  CHECK(torch::allclose(a.target_bboxes[0][0], gt_box));
}

TEST_CASE("obb learning: a tiny model fits drawn rotated bars (loss and angle loss fall) (slow)") {
  // Two 96 x 96 images with three bars each: 40 x 10 px at angles 0.3, 1.2, 2.2 rad.
  const int s = 96;
  std::vector<torch::Tensor> images;
  std::vector<float> labels, rboxes;
  const double angles[] = {0.3, 1.2, 2.2};
  const double centres[2][3][2] = {{{30, 30}, {66, 40}, {45, 70}}, {{60, 62}, {28, 58}, {52, 26}}};
  for (int b = 0; b < 2; ++b) {
    cv::Mat im(s, s, CV_8UC3, cv::Scalar(60, 60, 60));
    for (int k = 0; k < 3; ++k) {
      const double a = angles[k], cx = centres[b][k][0], cy = centres[b][k][1];
      const double c = std::cos(a), sn = std::sin(a);
      std::vector<cv::Point> corners;
      for (auto [u, v] : {std::pair{20.0, 5.0}, {20.0, -5.0}, {-20.0, -5.0}, {-20.0, 5.0}}) {
        corners.emplace_back(static_cast<int>(std::lround(cx + u * c - v * sn)),
                             static_cast<int>(std::lround(cy + u * sn + v * c)));
      }
      cv::fillConvexPoly(im, corners, cv::Scalar(40 + 80 * k, 220 - 60 * k, 200));
      labels.insert(labels.end(), {static_cast<float>(b), static_cast<float>(k % 2),
                                   static_cast<float>(cx / s), static_cast<float>(cy / s),
                                   static_cast<float>(40.0 / s), static_cast<float>(40.0 / s)});
      rboxes.insert(rboxes.end(), {static_cast<float>(cx / s), static_cast<float>(cy / s),
                                   static_cast<float>(40.0 / s), static_cast<float>(10.0 / s),
                                   static_cast<float>(a)});
    }
    images.push_back(torch::from_blob(im.data, {s, s, 3}, torch::kUInt8)
                         .permute({2, 0, 1})
                         .to(torch::kFloat)
                         .div(255.0));
  }
  LossTargets targets;
  targets.labels = torch::tensor(labels).view({-1, 6});
  targets.rboxes = torch::tensor(rboxes).view({-1, 5});
  const auto batch = torch::stack(images);
  for (const auto family : {model::ModelFamily::kYolo26, model::ModelFamily::kYolo11}) {
    CAPTURE(static_cast<int>(family));
    torch::manual_seed(0);
    auto net = model::build_tiny_yolo_model(family, 2, core::Task::kObb);
    net->train();
    ObbLoss loss(2, net->reg_max(), net->strides(), {}, 1.0, net->end2end());
    torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.02).momentum(0.9));
    double first = 0, last = 0, first_angle = 0, last_angle = 0;
    for (int step = 0; step < 50; ++step) {
      sgd.zero_grad();
      const auto r = loss(net->forward_for_loss(batch), targets, 2);
      r.total.backward();
      for (const auto& p : net->parameters()) {
        if (p.grad().defined()) REQUIRE(torch::isfinite(p.grad()).all().item<bool>());
      }
      sgd.step();
      const double total = r.total.item<double>();
      if (step == 0) first = total, first_angle = r.items[3].item<double>();
      last = total, last_angle = r.items[3].item<double>();
    }
    CHECK(last < 0.6 * first);
    CHECK(last_angle < first_angle);
  }
}
