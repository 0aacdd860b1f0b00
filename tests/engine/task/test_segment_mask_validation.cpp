// Validation masks by hand: process_mask's box scaling to prototype pixels, the native path's
// upsampling, the GT masks of an overlap index image, the reference's mask IoU, and the resize to
// the original image with the letterbox window cropped and bytes truncated.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "engine/task/segment_mask_validation.h"

using namespace trainer;
using doctest::Approx;

TEST_CASE("predicted_masks: logit > 0, cropped to the box at prototype or input resolution") {
  // One prototype of ones on a 4 x 4 grid (a 16 x 16 input), coefficient 1: logits 1 everywhere.
  const auto protos = torch::ones({1, 4, 4});
  const auto coef = torch::ones({2, 1});
  coef[1][0] = -1;  // logits -1: empty
  const auto boxes = torch::tensor({0.0f, 0.0f, 8.0f, 8.0f, 0.0f, 0.0f, 16.0f, 16.0f}).view({2, 4});
  // process_mask: the box (0, 0, 8, 8) x 1/4 = (0, 0, 2, 2): 4 prototype pixels.
  const auto small = engine::predicted_masks(protos, coef, boxes, 16, 16, false);
  CHECK(small.sizes() == torch::IntArrayRef{2, 4, 4});
  CHECK(small[0].sum().item<int64_t>() == 4);
  CHECK(small[1].sum().item<int64_t>() == 0);
  // Native: upsampled to 16 x 16 first, then the input-pixel box: 64 pixels.
  const auto native = engine::predicted_masks(protos, coef, boxes, 16, 16, true);
  CHECK(native.sizes() == torch::IntArrayRef{2, 16, 16});
  CHECK(native[0].sum().item<int64_t>() == 64);
  CHECK(engine::predicted_masks(protos, torch::zeros({0, 1}), torch::zeros({0, 4}), 16, 16, true)
            .size(0) == 0);
}

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

TEST_CASE("masks_to_original: the letterbox window, bilinear resize, bytes truncated") {
  // An 8 (h) x 4 (w) original letterboxed into 16 x 16 at gain 2: padding 4 left and right.
  data::ImageGeometry g{8, 4, 2.0, 2.0, 4.0, 0.0};
  auto masks = torch::zeros({2, 16, 16}, torch::kUInt8);
  masks[0].narrow(1, 4, 4).fill_(1);  // window columns 0..3 of 8: output columns 0, 1 (exact)
  masks[1].narrow(1, 4, 3).fill_(1);  // columns 0..2: output column 1 reads 0.5 -> 0
  const auto out = engine::masks_to_original(masks, g);
  CHECK(out.sizes() == torch::IntArrayRef{2, 8, 4});
  CHECK(out[0].sum().item<int64_t>() == 16);
  CHECK(out[0].select(1, 1).sum().item<int64_t>() == 8);
  CHECK(out[1].sum().item<int64_t>() == 8);
  CHECK(out[1].select(1, 1).sum().item<int64_t>() == 0);
}
