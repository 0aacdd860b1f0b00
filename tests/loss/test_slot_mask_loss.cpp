// The chunked, recomputing slot mask loss against its composition from ATen ops (the static
// step's previous form): value and gradients, for both mask layouts, any chunking, fillers,
// boxes reaching past the mask, and BF16 autocast.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "core/autocast_guard.h"
#include "loss/positive_slots.h"
#include "loss/slot_mask_loss.h"
#include "model/mask_ops.h"

using namespace trainer;
using namespace trainer::loss;

namespace {

constexpr int64_t kB = 2, kP = 7, kNm = 4, kH = 9, kW = 11, kM = 3;

// The oracle: every slot at once, autograd through the composed ops.
at::Tensor composed(const SlotMaskInputs& in) {
  const int64_t bs = in.protos.size(0), p = in.coefficients.size(1);
  const int64_t h = in.protos.size(2), w = in.protos.size(3);
  const auto gt = (in.overlap ? in.masks.unsqueeze(1).eq((in.gt_row + 1).view({bs, p, 1, 1}))
                              : gather_slots(in.masks, in.gt_row))
                      .to(torch::kFloat);
  const auto logits = torch::bmm(in.coefficients, in.protos.flatten(2)).view({bs, p, h, w});
  const auto bce = torch::binary_cross_entropy_with_logits(logits, gt, {}, {}, at::Reduction::None);
  const auto cropped =
      model::crop_mask(bce.flatten(0, 1), in.boxes.flatten(0, 1)).view({bs, p, h, w});
  return (cropped.mean({2, 3}) * in.weight).sum();
}

SlotMaskInputs random_inputs(bool overlap, uint64_t seed) {
  torch::manual_seed(seed);
  SlotMaskInputs in;
  in.coefficients = torch::randn({kB, kP, kNm}).requires_grad_();
  in.protos = torch::randn({kB, kNm, kH, kW}).requires_grad_();
  in.overlap = overlap;
  in.masks = overlap ? torch::randint(0, kM + 1, {kB, kH, kW}, torch::kLong)
                     : torch::rand({kB, kM, kH, kW}).gt(0.5);
  in.gt_row = torch::randint(0, kM, {kB, kP}, torch::kLong);
  // Corners anywhere from -2 to 13: some boxes reach past the mask, one is empty (x2 < x1).
  const auto a = torch::rand({kB, kP, 2}) * 15 - 2, b = torch::rand({kB, kP, 2}) * 15 - 2;
  in.boxes = torch::cat({torch::minimum(a, b), torch::maximum(a, b)}, -1);
  in.boxes.index_put_({0, 1, 2}, in.boxes.index({0, 1, 0}) - 1.0);
  // Fillers (weight 0) and positives with their 1 / area factors.
  in.weight = torch::rand({kB, kP}) * torch::rand({kB, kP}).gt(0.3).to(torch::kFloat);
  return in;
}

struct Result {
  at::Tensor value, grad_coefficients, grad_protos;
};

template <typename Loss>
Result run_slot_mask(const SlotMaskInputs& source, Loss loss) {
  SlotMaskInputs in = source;
  in.coefficients = source.coefficients.detach().clone().requires_grad_();
  in.protos = source.protos.detach().clone().requires_grad_();
  const auto value = loss(in);
  // A downstream factor, so the incoming gradient is not 1.
  (value * 0.37).backward();
  return {value.detach(), in.coefficients.grad(), in.protos.grad()};
}

double rel(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).norm() / b.norm().clamp_min(1e-30)).item<double>();
}

}  // namespace

TEST_CASE("slot mask loss: value and gradients equal the composed ops, any chunking") {
  for (const bool overlap : {true, false}) {
    CAPTURE(overlap);
    const auto in = random_inputs(overlap, overlap ? 5 : 6);
    const Result want = run_slot_mask(in, composed);
    REQUIRE(want.value.item<double>() > 0.0);
    // chunk 0 (the budget: every slot at once here), 1, 3 (a short last chunk), P, more than P.
    for (const int64_t chunk : {int64_t{0}, int64_t{1}, int64_t{3}, kP, kP + 5}) {
      CAPTURE(chunk);
      const Result got =
          run_slot_mask(in, [&](const SlotMaskInputs& x) { return slot_mask_loss(x, chunk); });
      // fp32 sums in another order: rounding, 1e-6 relative.
      CHECK(rel(got.value, want.value) < 1e-6);
      CHECK(rel(got.grad_coefficients, want.grad_coefficients) < 1e-6);
      CHECK(rel(got.grad_protos, want.grad_protos) < 1e-6);
    }
    // Prototypes without a gradient (backward skips their matmul): the same coefficient gradient.
    const Result frozen = run_slot_mask(in, [](SlotMaskInputs x) {
      x.protos = x.protos.detach();
      return slot_mask_loss(x, 3);
    });
    CHECK(rel(frozen.grad_coefficients, want.grad_coefficients) < 1e-6);
    CHECK_FALSE(frozen.grad_protos.defined());
  }
}

TEST_CASE("slot mask loss: fillers and the empty box give no gradient, no slot gives 0") {
  auto in = random_inputs(true, 9);
  in.boxes.index_put_({1, 4}, torch::tensor({1.0, 1.0, 8.0, 7.0}));
  in.weight = torch::zeros({kB, kP});
  in.weight.index_put_({1, 4}, 0.5);
  in.weight.index_put_({0, 1}, 0.7);  // weighted, but its box is empty (x2 < x1)
  const Result got =
      run_slot_mask(in, [](const SlotMaskInputs& x) { return slot_mask_loss(x, 2); });
  const auto per_slot = got.grad_coefficients.abs().sum(-1);  // (B, P)
  CHECK(per_slot.index({1, 4}).item<double>() > 0.0);
  CHECK(per_slot.index({0, 1}).item<double>() == 0.0);
  CHECK(per_slot.sum().item<double>() == per_slot.index({1, 4}).item<double>());

  SlotMaskInputs none = in;
  none.coefficients = torch::zeros({kB, 0, kNm}).requires_grad_();
  none.gt_row = torch::zeros({kB, 0}, torch::kLong);
  none.boxes = torch::zeros({kB, 0, 4});
  none.weight = torch::zeros({kB, 0});
  const Result empty =
      run_slot_mask(none, [](const SlotMaskInputs& x) { return slot_mask_loss(x); });
  CHECK(empty.value.item<double>() == 0.0);
  CHECK(empty.grad_protos.abs().sum().item<double>() == 0.0);
}

TEST_CASE("slot mask loss: prototypes upsampled from a channels-last tensor get their gradient") {
  // As in the static step: the prototypes upsampled to the masks' size; the gradient reaches the
  // smaller tensor through the upsampling, for a channels-last input too.
  const auto in = random_inputs(false, 13);
  torch::manual_seed(14);
  const auto small = torch::randn({kB, kNm, 5, 6});
  for (const bool channels_last : {false, true}) {
    CAPTURE(channels_last);
    const auto leaf_of = [&] {
      auto t = channels_last ? small.contiguous(at::MemoryFormat::ChannelsLast) : small.clone();
      return t.requires_grad_();
    };
    const auto through = [&](auto loss, const at::Tensor& leaf) {
      return run_slot_mask(in, [&](SlotMaskInputs x) {
        x.protos = at::upsample_bilinear2d(leaf, {kH, kW}, false);
        return loss(x);
      });
    };
    const auto want_leaf = leaf_of(), got_leaf = leaf_of();
    const Result want = through(composed, want_leaf);
    const Result got =
        through([](const SlotMaskInputs& x) { return slot_mask_loss(x, 4); }, got_leaf);
    CHECK(rel(got.value, want.value) < 1e-6);
    CHECK(rel(got.grad_coefficients, want.grad_coefficients) < 1e-6);
    REQUIRE(got_leaf.grad().defined());
    CHECK(rel(got_leaf.grad(), want_leaf.grad()) < 1e-6);
    CHECK_FALSE(got.grad_protos.defined());  // x.protos is not a leaf of `run`'s
  }
}

TEST_CASE("slot mask loss under BF16 autocast follows the composed ops under autocast") {
  // Both run the logits' matmul in BF16 (the fused form recomputes it the same way in backward)
  // and the BCE in fp32; the gradients' matmuls take BF16 operands in both. The composed
  // prototype gradient comes out of its matmul in BF16 (2^-8 relative steps) where the fused one
  // sums the chunks in fp32. Measured: value and coefficient gradients equal, prototype
  // gradients 1.4e-3 apart (BF16 against fp32 arithmetic: 3.4e-3).
  const auto in = random_inputs(true, 11);
  const auto under_autocast = [](auto loss) {
    return [loss](const SlotMaskInputs& x) {
      const core::AutocastGuard bf16(c10::DeviceType::CPU, at::kBFloat16, true);
      return loss(x);
    };
  };
  const Result want = run_slot_mask(in, under_autocast(composed));
  const Result got = run_slot_mask(
      in, under_autocast([](const SlotMaskInputs& x) { return slot_mask_loss(x, 3); }));
  const Result fp32 = run_slot_mask(in, composed);
  MESSAGE("bf16 gaps: value " << rel(got.value, want.value) << ", coefficients "
                              << rel(got.grad_coefficients, want.grad_coefficients) << ", protos "
                              << rel(got.grad_protos, want.grad_protos) << "; bf16 vs fp32 "
                              << rel(want.grad_protos, fp32.grad_protos));
  CHECK(rel(got.value, want.value) < 1e-5);  // identical logits, fp32 BCE
  CHECK(rel(got.grad_coefficients, want.grad_coefficients) < 1e-3);
  CHECK(rel(got.grad_protos, want.grad_protos) < 1e-2);
  CHECK((got.grad_protos.scalar_type() == at::kFloat));  // the inputs' dtype
}

TEST_CASE("slot mask loss: the chunk keeps one temporary near 128 MiB") {
  // 2^25 fp32 elements per (B, chunk, h, w): at 640 px, batch 16 (160 x 160 masks) a slot is
  // 409,600 elements, so 81 slots (132.7 MB); at most the slots; at least 1.
  CHECK(slot_mask_chunk(16, 1000, 160, 160) == 81);
  CHECK(slot_mask_chunk(4, 10, 32, 32) == 10);
  CHECK(slot_mask_chunk(64, 1000, 1024, 1024) == 1);
  CHECK(slot_mask_chunk(1, 0, 8, 8) == 1);
  CHECK_THROWS_AS(slot_mask_loss(SlotMaskInputs{}), std::invalid_argument);
}
