// process_mask by hand: the box scaled to prototype pixels, and the native path's upsampling.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "model/mask_ops.h"

using namespace trainer;

TEST_CASE("predicted_masks: logit > 0, cropped to the box at prototype or input resolution") {
  // One prototype of ones on a 4 x 4 grid (a 16 x 16 input), coefficient 1: logits 1 everywhere.
  const auto protos = torch::ones({1, 4, 4});
  const auto coef = torch::ones({2, 1});
  coef[1][0] = -1;  // logits -1: empty
  const auto boxes = torch::tensor({0.0f, 0.0f, 8.0f, 8.0f, 0.0f, 0.0f, 16.0f, 16.0f}).view({2, 4});
  // process_mask: the box (0, 0, 8, 8) x 1/4 = (0, 0, 2, 2): 4 prototype pixels.
  const auto small = model::predicted_masks(protos, coef, boxes, 16, 16, false);
  CHECK(small.sizes() == torch::IntArrayRef{2, 4, 4});
  CHECK(small[0].sum().item<int64_t>() == 4);
  CHECK(small[1].sum().item<int64_t>() == 0);
  // Native: upsampled to 16 x 16 first, then the input-pixel box: 64 pixels.
  const auto native = model::predicted_masks(protos, coef, boxes, 16, 16, true);
  CHECK(native.sizes() == torch::IntArrayRef{2, 16, 16});
  CHECK(native[0].sum().item<int64_t>() == 64);
  CHECK(model::predicted_masks(protos, torch::zeros({0, 1}), torch::zeros({0, 4}), 16, 16, true)
            .size(0) == 0);
}
