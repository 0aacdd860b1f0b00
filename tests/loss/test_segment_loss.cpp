// The segmentation loss pieces by hand: the crop-normalised mask loss of a known prototype and
// coefficient pair, the multi-channel Dice, the semantic target, exact mask IoU, the mask-aware
// overlaps (mask IoU only for each GT's top 3 x topk pairs), and the loss's input checks. The
// whole loss against the reference is tests/parity/test_seg_loss_parity.cpp.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>

#include "loss/segment_assigner.h"
#include "loss/segment_head_loss.h"
#include "loss/segment_loss.h"

using namespace trainer::loss;
using doctest::Approx;

TEST_CASE("single_mask_loss: BCE of coef x proto, cropped, mean over the mask, / box area") {
  // One prototype on a 1 x 2 grid [2, -1], coefficient 1.5: logits [3, -1.5]; GT [1, 1].
  // BCE = ln(1 + e^-3) = 0.0485874 and ln(1 + e^1.5) = 1.7014133. The box keeps column 0 only:
  // mean over the 2 pixels 0.0242937, divided by the area fraction 0.25: 0.0971748.
  const auto protos = torch::tensor({2.0f, -1.0f}).view({1, 1, 2});
  const auto coef = torch::tensor({1.5f}).view({1, 1});
  const auto gt = torch::ones({1, 1, 2});
  const auto box = torch::tensor({0.0f, 0.0f, 1.0f, 1.0f}).view({1, 4});
  const auto area = torch::tensor({0.25f});
  const double want = std::log1p(std::exp(-3.0)) / 2 / 0.25;
  CHECK(single_mask_loss(gt, coef, protos, box, area).item<double>() == Approx(want).epsilon(1e-6));
  // The whole row: (0.0485874 + 1.7014133) / 2 / 0.25.
  const auto wide = torch::tensor({0.0f, 0.0f, 2.0f, 1.0f}).view({1, 4});
  const double both = (std::log1p(std::exp(-3.0)) + std::log1p(std::exp(1.5))) / 2 / 0.25;
  CHECK(single_mask_loss(gt, coef, protos, wide, area).item<double>() ==
        Approx(both).epsilon(1e-6));
}

TEST_CASE("multi_channel_dice_loss: smooth 1, by hand") {
  // Logits 0 (sigmoid 0.5) on two pixels, target [1, 0]: intersection 0.5, sums 1 + 1:
  // dice (1 + 1) / (2 + 1) = 2/3, loss 1/3. A perfect confident prediction: ~0.
  const auto logits = torch::zeros({1, 1, 1, 2});
  const auto target = torch::tensor({1.0f, 0.0f}).view({1, 1, 1, 2});
  CHECK(multi_channel_dice_loss(logits, target).item<double>() == Approx(1.0 / 3).epsilon(1e-6));
  const auto sure = torch::tensor({40.0f, -40.0f}).view({1, 1, 1, 2});
  CHECK(multi_channel_dice_loss(sure, target).item<double>() == Approx(0.0).epsilon(1e-6));
  // Two channels are averaged: channel 2 empty target and prediction 0.5 each: (0 + 1)/(1 + 1).
  const auto two = torch::zeros({1, 2, 1, 2});
  const auto t2 = torch::cat({target, torch::zeros({1, 1, 1, 2})}, 1);
  CHECK(multi_channel_dice_loss(two, t2).item<double>() ==
        Approx((1.0 / 3 + 0.5) / 2).epsilon(1e-6));
}

TEST_CASE("semantic_targets: the covering instance's class, smallest on top, 0 uncovered") {
  // One image, 1 x 3 pixels; rows: class 2 covering pixels 0-1, class 0 covering pixel 1 only.
  MaskTargets t;
  t.batch_idx = torch::tensor({0, 0}, torch::kLong);
  t.classes = torch::tensor({2, 0}, torch::kLong);
  t.overlap = true;
  t.masks = torch::tensor({1, 2, 0}, torch::kInt32).view({1, 1, 3});
  auto s = semantic_targets(t, 1, 3).view({3, 3});        // [class][pixel]
  CHECK(torch::equal(s, torch::tensor({0.0f, 1.0f, 0.0f,  //
                                       0.0f, 0.0f, 0.0f,  //
                                       1.0f, 0.0f, 0.0f})
                            .view({3, 3})));
  // The same as separate masks: the smaller instance (class 0) wins pixel 1.
  t.overlap = false;
  t.masks = torch::tensor({1, 1, 0, 0, 1, 0}, torch::kUInt8).view({2, 1, 3});
  s = semantic_targets(t, 1, 3).view({3, 3});
  CHECK(torch::equal(s, torch::tensor({0.0f, 1.0f, 0.0f,  //
                                       0.0f, 0.0f, 0.0f,  //
                                       1.0f, 0.0f, 0.0f})
                            .view({3, 3})));
}

TEST_CASE("binary_mask_iou: intersection over union, union floored at 1") {
  const auto gt = torch::tensor({1.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}).view({2, 4});
  const auto pred = torch::tensor({0.0f, 1.0f, 1.0f, 0.0f}).view({1, 4});
  const auto iou = binary_mask_iou(gt, pred);
  CHECK(iou[0][0].item<float>() == Approx(1.0 / 3));
  CHECK(iou[1][0].item<float>() == 0.0f);                                        // empty GT: 0 / 2
  CHECK(binary_mask_iou(gt, torch::zeros({1, 4}))[1][0].item<float>() == 0.0f);  // 0 / max(0, 1)
}

TEST_CASE(
    "mask_aware_overlaps: (iou + mask iou) / 2 for each GT's top 3 topk pairs, iou / 2 else") {
  // One GT, five candidate anchors, topk 1: the top 3 by score^0.5 iou^6 (scores 1) are anchors
  // 0 (0.9), 3 (0.7), 2 (0.5). Every predicted mask is the full 4 x 4 grid (coefficient 1 on a
  // prototype of ones, box = the grid), as is the GT's: their mask IoU is 1.
  AssignerOptions o;
  o.topk = 1;
  MaskAssignInputs in;
  in.coefficients = torch::ones({1, 5, 1});
  in.boxes = torch::tensor({0.0f, 0.0f, 4.0f, 4.0f}).view({1, 1, 4}).expand({1, 5, 4});
  in.mask_scale = 1.0;
  in.protos = torch::ones({1, 1, 4, 4});
  in.gt_masks = torch::ones({1, 1, 4, 4}, torch::kBool);
  const auto pairs =
      torch::tensor({0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4}, torch::kLong).view({5, 3});
  const auto iou = torch::tensor({0.9f, 0.1f, 0.5f, 0.7f, 0.3f});
  const auto out = mask_aware_overlaps(pairs, iou, torch::ones({5}), o, 1, in);
  const std::vector<float> want = {0.95f, 0.05f, 0.75f, 0.85f, 0.15f};
  for (int i = 0; i < 5; ++i) CHECK(out[i].item<float>() == Approx(want[i]).epsilon(1e-6));
  // A predicted box over half the grid: its mask is cropped to 8 pixels, IoU 0.5.
  in.boxes = torch::tensor({0.0f, 0.0f, 2.0f, 4.0f}).view({1, 1, 4}).expand({1, 5, 4});
  const auto half = mask_aware_overlaps(pairs, iou, torch::ones({5}), o, 1, in);
  CHECK(half[0].item<float>() == Approx((0.9 + 0.5) / 2).epsilon(1e-6));
}

TEST_CASE("segment loss: clear errors without masks or coefficients") {
  SegmentLoss loss(2, 1, {8, 16, 32}, LossGains{}, /*end2end=*/false);
  trainer::model::DetectOutput out;
  for (int l = 0; l < 3; ++l) out.one2many.push_back(torch::zeros({1, 4 + 2, 8 >> l, 8 >> l}));
  const auto labels = torch::tensor({0.0f, 1.0f, 0.5f, 0.5f, 0.5f, 0.5f}).view({1, 6});
  CHECK_THROWS_AS(loss(out, LossTargets{labels, {}, {}, torch::zeros({1, 16, 16}), true}, 1),
                  std::invalid_argument);  // no coefficients / protos
  for (int l = 0; l < 3; ++l) out.one2many_coef.push_back(torch::zeros({1, 32, 8 >> l, 8 >> l}));
  out.protos = {torch::zeros({1, 32, 16, 16})};
  CHECK_THROWS_AS(loss(out, LossTargets{labels, {}, {}, {}, true}, 1), std::invalid_argument);
  const auto r = loss(out, LossTargets{labels, {}, {}, torch::ones({1, 16, 16}), true}, 1);
  CHECK(r.items.size(0) == 5);
  CHECK(std::isfinite(r.total.item<double>()));
  CHECK(loss.item_names() ==
        std::vector<std::string>{"box_loss", "seg_loss", "cls_loss", "l1_loss", "sem_loss"});
}
