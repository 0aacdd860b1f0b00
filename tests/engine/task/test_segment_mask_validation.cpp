// Validation masks by hand: the GT masks of an overlap index image and the reference's mask IoU.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "engine/task/segment_mask_validation.h"

using namespace trainer;
using doctest::Approx;

TEST_CASE("truth_masks: one 0/1 mask per row from an overlap index image, or the rows") {
  const auto index = torch::tensor({1, 1, 2, 0}, torch::kInt32).view({1, 2, 2});
  const auto gt = engine::truth_masks(index, true, 0, 0, 2, 2, 2);
  CHECK(gt.sizes() == torch::IntArrayRef{2, 2, 2});
  CHECK(gt[0].sum().item<float>() == 2);
  CHECK(gt[1].sum().item<float>() == 1);
  // Per-row masks: image 1's rows are rows 1..2 of the batch.
  const auto rows = torch::zeros({3, 2, 2}, torch::kUInt8);
  rows[1][0][0] = 1;
  rows[2].fill_(1);
  const auto per = engine::truth_masks(rows, false, 1, 1, 2, 2, 2);
  CHECK(per[0].sum().item<float>() == 1);
  CHECK(per[1].sum().item<float>() == 4);
  // At another size: bilinear, then > 0.5 (a full mask stays full).
  CHECK(engine::truth_masks(rows, false, 1, 1, 2, 4, 4)[1].sum().item<float>() == 16);
}

TEST_CASE("mask_overlaps: intersection / (|gt| + |pred| - intersection + 1e-7), [gt][pred]") {
  const auto gt = torch::tensor({1, 1, 0, 0, 0, 0, 0, 0}, torch::kFloat).view({2, 2, 2});
  const auto pred = torch::tensor({0, 1, 1, 0}, torch::kUInt8).view({1, 2, 2});
  const auto iou = engine::mask_overlaps(gt, pred);
  REQUIRE(iou.size() == 2);
  CHECK(iou[0] == Approx(1.0 / 3));
  CHECK(iou[1] == 0.0f);
  CHECK(engine::mask_overlaps(gt, torch::zeros({0, 2, 2}, torch::kUInt8)).empty());
}
