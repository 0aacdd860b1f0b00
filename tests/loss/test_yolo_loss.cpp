// The detection loss on tiny batches worked out by hand: the normalisation by the batch's target
// score sum, the box/L1 terms, batch-size scaling, the end-to-end weights and no-GT batches.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>

#include "core/autocast_guard.h"
#include "loss/gt_targets.h"
#include "loss/yolo_loss.h"

using namespace trainer::loss;
using trainer::model::DetectOutput;

namespace {

DetectOutput detect_output(std::vector<torch::Tensor> one2many,
                           std::vector<torch::Tensor> one2one) {
  DetectOutput out;
  out.one2many = std::move(one2many);
  out.one2one = std::move(one2one);
  return out;
}

// One level of stride 8 on a 16 x 16 input: a 2 x 2 grid, anchors (c + 0.5, r + 0.5), nc = 1,
// reg_max = 1, two images. Every anchor of image 0 predicts the box [0,0,2,2] (grid units)
// exactly, except anchor 0 which predicts [0,0,2,1] (b = 0.5 instead of 1.5). All logits 0.
torch::Tensor tiny_output() {
  auto out = torch::zeros({2, 5, 2, 2});
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) {
      const float x = c + 0.5f, y = r + 0.5f;
      for (int b = 0; b < 2; ++b) {
        out[b][0][r][c] = x;
        out[b][1][r][c] = y;
        out[b][2][r][c] = 2 - x;
        out[b][3][r][c] = 2 - y;
      }
    }
  out[0][3][0][0] = 0.5f;
  return out;
}

// One GT covering image 0: [cx, cy, w, h] = [0.5, 0.5, 1, 1] -> [0,0,16,16] pixels.
torch::Tensor tiny_labels() {
  return torch::tensor({{0.0f, 0.0f, 0.5f, 0.5f, 1.0f, 1.0f}});
}

YoloLoss tiny_loss(bool end2end) {
  return YoloLoss(1, 1, {8}, LossGains{}, end2end);
}

// Hand computation for the one-to-many head (topk 10 -> all 4 anchors of the GT, score s = 0.5):
// u0 = CIoU(GT, anchor 0's box) in pixels = 0.46550186497 (16 x 16 vs 16 x 8, see test_assigner),
// the other anchors' u = 1 (to 1e-8). Targets: u^6 / 1 -> w0 = u0^6 = 0.0101748626, others 1.
// target_scores_sum = 3 + w0 = 3.0101748626.
// cls: BCE(0, t) = ln 2 for any t, 8 anchors over the batch: 0.5 x 8 ln2 / 3.0101748626
//      = 0.9210723127.
// box: anchor 0: (1 - CIoU([0,0,2,1], [0,0,2,2]) = 1 - 0.46550181015) x w0; the exact anchors
//      add 3 x (1 - 4 / (4 + 5e)) = 3.75e-7: 7.5 x (0.0054385... + 3.75e-7) / tss = 0.013551.
// L1:  anchor 0's b is 1 cell = 8 px off, / 16 px = 0.5, mean over 4 sides 0.125:
//      1.5 x 0.125 x w0 / tss = 0.00063377937.
constexpr double kCls = 0.9210723126833347;
constexpr double kBox = 0.01355015705612078 + 7.5 * 3.75e-7 / 3.0101748625604374;
constexpr double kL1 = 0.0006337793706971809;

}  // namespace

TEST_CASE("packing labels per image keeps their order and pads with masked rows") {
  const auto labels = torch::tensor({{1.0f, 2.0f, 0.5f, 0.5f, 0.5f, 0.5f},
                                     {0.0f, 1.0f, 0.25f, 0.25f, 0.5f, 0.5f},
                                     {1.0f, 3.0f, 0.75f, 0.5f, 0.5f, 1.0f}});
  const auto gt = pack_targets(labels, 3, 4, /*h=*/32, /*w=*/64, torch::kCPU);
  REQUIRE(gt.bboxes.sizes() == torch::IntArrayRef({3, 2, 4}));
  // Image 1: rows 0 and 2 in that order; (0.75, 0.5, 0.5, 1) x (64, 32) -> [32, 0, 64, 32].
  CHECK(gt.labels[1][0][0].item<float>() == 2.0f);
  CHECK(gt.labels[1][1][0].item<float>() == 3.0f);
  CHECK(torch::equal(gt.bboxes[1][1], torch::tensor({32.0f, 0.0f, 64.0f, 32.0f})));
  CHECK(torch::equal(gt.bboxes[0][0], torch::tensor({0.0f, 0.0f, 32.0f, 16.0f})));
  CHECK(torch::equal(gt.mask.view({-1}), torch::tensor({true, false, true, true, false, false})));
  const auto empty = pack_targets(torch::zeros({0, 6}), 2, 4, 32, 32, torch::kCPU);
  CHECK(empty.bboxes.sizes() == torch::IntArrayRef({2, 0, 4}));
}

TEST_CASE("bad labels are reported with their row") {
  auto loss = tiny_loss(false);
  const auto out = detect_output({tiny_output()}, {});
  const auto bad_class =
      torch::tensor({{0.0f, 0.0f, 0.5f, 0.5f, 1.0f, 1.0f}, {1.0f, 3.0f, 0.5f, 0.5f, 1.0f, 1.0f}});
  CHECK_THROWS_WITH_AS(loss(out, bad_class, 2), doctest::Contains("label row 1 has class 3"),
                       std::invalid_argument);
  const auto bad_image = torch::tensor({{2.0f, 0.0f, 0.5f, 0.5f, 1.0f, 1.0f}});
  CHECK_THROWS_WITH_AS(loss(out, bad_image, 2), doctest::Contains("image index 2"),
                       std::invalid_argument);
  CHECK_THROWS_AS(loss(out, tiny_labels(), 3), std::invalid_argument);  // batch size mismatch
  const auto wrong = detect_output({torch::zeros({2, 6, 2, 2})}, {});
  CHECK_THROWS_WITH_AS(loss(wrong, tiny_labels(), 2), doctest::Contains("expected (B, 5"),
                       std::invalid_argument);
}

TEST_CASE("BCE, CIoU and L1 terms normalised by the batch's target score sum (hand-computed)") {
  auto loss = tiny_loss(false);
  const auto r = loss(detect_output({tiny_output()}, {}), tiny_labels(), 2);
  REQUIRE(r.items.sizes() == torch::IntArrayRef({3}));
  CHECK(r.items[0].item<float>() == doctest::Approx(kBox).epsilon(1e-4));
  CHECK(r.items[1].item<float>() == doctest::Approx(kCls).epsilon(1e-5));
  CHECK(r.items[2].item<float>() == doctest::Approx(kL1).epsilon(1e-5));
  // total = (box + cls + dfl) x batch size, with gradient; items are detached.
  CHECK(r.total.dim() == 0);
  CHECK(r.total.item<float>() == doctest::Approx(2 * (kBox + kCls + kL1)).epsilon(1e-4));
  CHECK(r.total.requires_grad() == false);  // inputs here carry no grad
  CHECK_FALSE(r.items.requires_grad());
}

TEST_CASE("end-to-end: 0.8 o2m + 0.2 o2o, logged items are the o2o items") {
  auto out = tiny_output().requires_grad_(true);
  auto o2o_out = tiny_output();
  auto loss = tiny_loss(true);
  const auto r = loss(detect_output({out}, {o2o_out}), tiny_labels(), 2);
  // o2o (topk 7 -> all 4, topk2 1): one positive, an exact anchor with target 1 -> tss = 1:
  // cls = 0.5 x 8 ln 2 = 2.7725887, box = 7.5 (1 - 4 / (4 + 5e)) ~ 9.4e-7, L1 = 0.
  CHECK(r.items[1].item<float>() == doctest::Approx(0.5 * 8 * std::log(2.0)).epsilon(1e-5));
  CHECK(r.items[0].item<float>() == doctest::Approx(0.0).epsilon(1e-5));
  CHECK(r.items[2].item<float>() == 0.0f);
  const double o2m = kBox + kCls + kL1;
  const double o2o = r.items.sum().item<double>();
  CHECK(r.total.item<float>() == doctest::Approx(2 * (0.8 * o2m + 0.2 * o2o)).epsilon(1e-4));
  r.total.backward();
  CHECK(out.grad().defined());
  CHECK(torch::isfinite(out.grad()).all().item<bool>());
}

TEST_CASE("ProgLoss weights at the first, middle and last epoch") {
  // E = 10: w_o2m = max(1 - u / 9, 0) x 0.7 + 0.1 after u end-of-epoch updates.
  CHECK(prog_loss_o2m_weight(0, 10) == doctest::Approx(0.8));
  CHECK(prog_loss_o2m_weight(1, 10) == doctest::Approx(0.8 - 0.7 / 9));      // 0.7222
  CHECK(prog_loss_o2m_weight(5, 10) == doctest::Approx(0.8 - 0.7 * 5 / 9));  // 0.4111
  CHECK(prog_loss_o2m_weight(9, 10) == doctest::Approx(0.1));                // last epoch
  CHECK(prog_loss_o2m_weight(12, 10) == doctest::Approx(0.1));               // floor
  CHECK(prog_loss_o2m_weight(1, 1) == doctest::Approx(0.1));                 // E = 1: span 1
  auto loss = tiny_loss(true);
  CHECK(loss.o2m_weight() == doctest::Approx(0.8));
  CHECK(loss.o2o_weight() == doctest::Approx(0.2));
  for (int e = 0; e < 5; ++e) loss.end_epoch(10);
  CHECK(loss.epoch_updates() == 5);
  CHECK(loss.o2m_weight() == doctest::Approx(0.41111111));
  CHECK(loss.o2o_weight() == doctest::Approx(0.58888889));
  for (int e = 5; e < 9; ++e) loss.end_epoch(10);
  CHECK(loss.o2m_weight() == doctest::Approx(0.1));
  CHECK(loss.o2o_weight() == doctest::Approx(0.9));
  // Resume at start_epoch 3: the reference sets updates = 2, then updates once.
  auto resumed = tiny_loss(true);
  resumed.set_epoch_updates(3, 10);
  CHECK(resumed.epoch_updates() == 3);
  CHECK(resumed.o2m_weight() == doctest::Approx(0.8 - 0.7 * 3 / 9));
  // Not end-to-end: the o2m loss only, weights fixed.
  auto plain = tiny_loss(false);
  plain.end_epoch(10);
  CHECK(plain.o2m_weight() == 1.0);
  CHECK(plain.o2o_weight() == 0.0);
}

TEST_CASE("no-GT batches: class loss over all anchors with sum 1, zero box terms, finite grads") {
  for (const bool end2end : {false, true}) {
    for (const int reg_max : {1, 16}) {
      CAPTURE(end2end);
      CAPTURE(reg_max);
      YoloLoss loss(1, reg_max, {8}, LossGains{}, end2end);
      auto out = torch::zeros({2, 4 * reg_max + 1, 2, 2}).requires_grad_(true);
      auto o2o = torch::zeros({2, 4 * reg_max + 1, 2, 2}).requires_grad_(true);
      auto preds = detect_output({out}, {});
      if (end2end) preds.one2one = {o2o};
      const auto r = loss(preds, torch::zeros({0, 6}), 2);
      // 8 anchors, logits 0, targets 0: 0.5 x 8 ln 2 / max(0, 1) = 2.7725887.
      CHECK(r.items[1].item<float>() == doctest::Approx(0.5 * 8 * std::log(2.0)));
      CHECK(r.items[0].item<float>() == 0.0f);
      CHECK(r.items[2].item<float>() == 0.0f);
      CHECK(r.total.item<float>() == doctest::Approx(2 * 0.5 * 8 * std::log(2.0)));
      r.total.backward();
      CHECK(torch::isfinite(out.grad()).all().item<bool>());
      // d/dx softplus(x) at 0 = 0.5, x 0.5 gain x 2 (batch): 0.5 (x 0.8 for end-to-end o2m).
      const float expected = end2end ? 0.4f : 0.5f;
      CHECK(out.grad()[0][4 * reg_max][0][0].item<float>() == doctest::Approx(expected));
    }
  }
}

TEST_CASE("bf16 predictions and autocast give the fp32 loss") {
  auto loss = tiny_loss(true);
  const auto fp32 = loss(detect_output({tiny_output()}, {tiny_output()}), tiny_labels(), 2);
  // Every value of tiny_output() is exact in bf16, and the loss casts to fp32 first.
  const auto bf16 = loss(
      detect_output({tiny_output().to(torch::kBFloat16)}, {tiny_output().to(torch::kBFloat16)}),
      tiny_labels(), 2);
  CHECK((bf16.total.scalar_type() == torch::kFloat));
  CHECK(torch::equal(bf16.items, fp32.items));
  torch::Tensor in_autocast;
  {
    trainer::core::AutocastGuard guard(torch::kCPU, torch::kBFloat16, true);
    in_autocast = loss(detect_output({tiny_output()}, {tiny_output()}), tiny_labels(), 2).items;
  }
  CHECK(torch::equal(in_autocast, fp32.items));
}

TEST_CASE("reg_max 16 with DFL: random outputs give finite gradients on all channels") {
  torch::manual_seed(0);
  YoloLoss loss(3, 16, {8, 16, 32}, LossGains{}, false);
  std::vector<torch::Tensor> levels;
  for (const int s : {8, 4, 2}) levels.push_back(torch::randn({2, 67, s, s}).requires_grad_(true));
  const auto labels = torch::tensor({{0.0f, 2.0f, 0.3f, 0.4f, 0.2f, 0.3f},
                                     {1.0f, 0.0f, 0.6f, 0.5f, 0.5f, 0.6f},
                                     {1.0f, 1.0f, 0.2f, 0.2f, 0.05f, 0.05f}});
  const auto r = loss(detect_output(levels, {}), labels, 2);
  CHECK(torch::isfinite(r.items).all().item<bool>());
  CHECK(r.items[0].item<float>() > 0);
  CHECK(r.items[2].item<float>() > 0);
  r.total.backward();
  for (const auto& l : levels) {
    CHECK(torch::isfinite(l.grad()).all().item<bool>());
    CHECK(l.grad().abs().sum().item<float>() > 0);
  }
}

TEST_CASE("pack_targets: host labels are packed on the host and the result moved, same values") {
  // Device labels (here CPU standing in) and host labels give identical targets; host labels are
  // what the training step passes, so no device value is read back to size the packed tensor.
  const auto labels = torch::tensor({1.0f, 2.0f, 0.5f, 0.5f, 0.25f, 0.5f,   //
                                     0.0f, 0.0f, 0.25f, 0.75f, 0.5f, 0.5f,  //
                                     1.0f, 1.0f, 0.125f, 0.25f, 0.25f, 0.5f})
                          .view({3, 6});
  const auto gt = trainer::loss::pack_targets(labels, 3, 4, /*h=*/32, /*w=*/64, torch::kCPU);
  CHECK(gt.labels.sizes() == torch::IntArrayRef({3, 2, 1}));
  // Image 1's rows keep their order: class 2 then class 1.
  CHECK(gt.labels[1][0][0].item<float>() == 2.0f);
  CHECK(gt.labels[1][1][0].item<float>() == 1.0f);
  // Image 0: centre (0.25 * 64, 0.75 * 32) = (16, 24), size (32, 16) -> (0, 16, 32, 32).
  CHECK(torch::equal(gt.bboxes[0][0], torch::tensor({0.0f, 16.0f, 32.0f, 32.0f})));
  CHECK(gt.mask[0][1][0].item<bool>() == false);  // padding
  CHECK(gt.mask[2].any().item<bool>() == false);  // no labels in image 2
}
