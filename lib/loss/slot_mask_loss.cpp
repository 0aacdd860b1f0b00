// See slot_mask_loss.h. d/dlogit of BCE-with-logits is sigmoid(logit) - target; the crop and the
// mean are linear, so a chunk's logit gradient is (sigmoid - target) x inside-box x weight / hw,
// and the matmul's gradients follow from it.
#include "loss/slot_mask_loss.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/autograd.h>

#include <algorithm>
#include <stdexcept>

#include "core/autocast_guard.h"
#include "loss/positive_slots.h"

namespace trainer::loss {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int64_t kChunkElements = int64_t{1} << 25;  // 128 MiB of fp32

struct Chunk {
  at::Tensor logits;  // (B, c, h, w) fp32
  at::Tensor target;  // (B, c, h, w) fp32 0/1
  at::Tensor inside;  // (B, c, h, w) fp32 0/1: the slot's box
};

// One chunk's logits (the matmul in `protos_flat`'s dtype with autocast off, so forward and
// backward agree), target masks and crop. protos_flat: (B, nm, h * w), cast once per pass.
Chunk chunk_terms(const at::Tensor& coefficients, const at::Tensor& protos_flat, int64_t h,
                  int64_t w, const at::Tensor& masks, bool overlap, const at::Tensor& gt_row,
                  const at::Tensor& boxes) {
  const int64_t bs = coefficients.size(0), c = coefficients.size(1);
  Chunk out;
  {
    const core::AutocastGuard off(protos_flat.device().type(), protos_flat.scalar_type(),
                                  /*enabled=*/false);
    out.logits = at::bmm(coefficients.to(protos_flat.scalar_type()), protos_flat)
                     .view({bs, c, h, w})
                     .to(at::kFloat);
  }
  out.target = (overlap ? masks.unsqueeze(1).eq((gt_row + 1).view({bs, c, 1, 1}))
                        : gather_slots(masks, gt_row))
                   .to(at::kFloat);
  const auto opts = boxes.options();
  const auto b = boxes.unsqueeze(-1).unsqueeze(-1);  // (B, c, 4, 1, 1)
  const auto cols = at::arange(w, opts).view({1, 1, 1, w});
  const auto rows = at::arange(h, opts).view({1, 1, h, 1});
  const auto keep_cols = cols.ge(b.select(2, 0)).logical_and(cols.lt(b.select(2, 2)));
  const auto keep_rows = rows.ge(b.select(2, 1)).logical_and(rows.lt(b.select(2, 3)));
  out.inside = keep_cols.to(at::kFloat) * keep_rows.to(at::kFloat);
  return out;
}

struct SlotMaskLossFunction : torch::autograd::Function<SlotMaskLossFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& coefficients,
                            const at::Tensor& protos, const at::Tensor& masks, bool overlap,
                            const at::Tensor& gt_row, const at::Tensor& boxes,
                            const at::Tensor& weight, int64_t chunk) {
    const auto device = protos.device().type();
    const at::ScalarType mm_dtype =
        at::autocast::is_autocast_enabled(device)
            ? at::autocast::get_autocast_dtype(device)
            : at::promote_types(coefficients.scalar_type(), protos.scalar_type());
    const int64_t slots = coefficients.size(1), h = protos.size(2), w = protos.size(3);
    const double pixels = static_cast<double>(h * w);
    const at::Tensor protos_flat = protos.to(mm_dtype).flatten(2);  // (B, nm, hw)
    at::Tensor total = at::zeros({}, weight.options().dtype(at::kFloat));
    for (int64_t start = 0; start < slots; start += chunk) {
      const int64_t n = std::min(chunk, slots - start);
      const Chunk t = chunk_terms(coefficients.narrow(1, start, n), protos_flat, h, w, masks,
                                  overlap, gt_row.narrow(1, start, n), boxes.narrow(1, start, n));
      const auto bce =
          at::binary_cross_entropy_with_logits(t.logits, t.target, {}, {}, at::Reduction::None);
      const auto per_slot = (bce * t.inside).sum({2, 3}) / pixels;  // (B, n)
      total.add_((per_slot * weight.narrow(1, start, n).to(at::kFloat)).sum());
    }
    ctx->save_for_backward({coefficients, protos, masks, gt_row, boxes, weight});
    ctx->saved_data["overlap"] = overlap;
    ctx->saved_data["chunk"] = chunk;
    ctx->saved_data["mm_dtype"] = static_cast<int64_t>(mm_dtype);
    return total;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &coefficients = saved[0], &protos = saved[1], &masks = saved[2];
    const at::Tensor &gt_row = saved[3], &boxes = saved[4], &weight = saved[5];
    const bool overlap = ctx->saved_data["overlap"].toBool();
    const int64_t chunk = ctx->saved_data["chunk"].toInt();
    const auto mm_dtype = static_cast<at::ScalarType>(ctx->saved_data["mm_dtype"].toInt());
    const int64_t bs = protos.size(0), nm = protos.size(1), slots = coefficients.size(1);
    const int64_t h = protos.size(2), w = protos.size(3);
    const double pixels = static_cast<double>(h * w);
    const bool want_protos = ctx->needs_input_grad(1);
    const at::Tensor g = grads[0].to(at::kFloat);                   // 0-d
    const at::Tensor protos_flat = protos.to(mm_dtype).flatten(2);  // (B, nm, hw)
    at::Tensor grad_coefficients = at::empty_like(coefficients);
    at::Tensor grad_protos =
        want_protos ? at::zeros({bs, nm, h * w}, protos.options().dtype(at::kFloat)) : at::Tensor();
    const core::AutocastGuard off(protos.device().type(), mm_dtype, /*enabled=*/false);
    for (int64_t start = 0; start < slots; start += chunk) {
      const int64_t n = std::min(chunk, slots - start);
      const at::Tensor coef = coefficients.narrow(1, start, n);
      const Chunk t = chunk_terms(coef, protos_flat, h, w, masks, overlap,
                                  gt_row.narrow(1, start, n), boxes.narrow(1, start, n));
      const auto scale =
          (weight.narrow(1, start, n).to(at::kFloat) * (g / pixels)).view({bs, n, 1, 1});
      const auto d_logits = ((t.logits.sigmoid() - t.target) * t.inside * scale)
                                .flatten(2)
                                .to(mm_dtype);  // (B, n, hw)
      grad_coefficients.narrow(1, start, n)
          .copy_(at::bmm(d_logits, protos_flat.transpose(1, 2)));  // (B, n, nm)
      if (want_protos) {
        grad_protos.add_(at::bmm(coef.to(mm_dtype).transpose(1, 2), d_logits));  // (B, nm, hw)
      }
    }
    return {grad_coefficients,
            want_protos ? grad_protos.view(protos.sizes()).to(protos.scalar_type()) : at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor()};
  }
};

}  // namespace

int64_t slot_mask_chunk(int64_t batch, int64_t slots, int64_t height, int64_t width) {
  const int64_t per_slot = std::max<int64_t>(1, batch * height * width);
  return std::clamp<int64_t>(kChunkElements / per_slot, 1, std::max<int64_t>(slots, 1));
}

at::Tensor slot_mask_loss(const SlotMaskInputs& in, int64_t chunk) {
  for (const at::Tensor* t :
       {&in.coefficients, &in.protos, &in.masks, &in.gt_row, &in.boxes, &in.weight}) {
    if (!t->defined()) throw std::invalid_argument("slot_mask_loss: an input is undefined");
  }
  if (in.coefficients.dim() != 3 || in.protos.dim() != 4 || in.gt_row.dim() != 2 ||
      in.boxes.dim() != 3 || in.weight.dim() != 2) {
    throw std::invalid_argument(
        "slot_mask_loss: coefficients (B, P, nm), protos (B, nm, h, w), gt_row and weight (B, P), "
        "boxes (B, P, 4)");
  }
  const int64_t bs = in.protos.size(0), slots = in.coefficients.size(1);
  if (chunk <= 0) chunk = slot_mask_chunk(bs, slots, in.protos.size(2), in.protos.size(3));
  return SlotMaskLossFunction::apply(in.coefficients, in.protos, in.masks, in.overlap, in.gt_row,
                                     in.boxes, in.weight, chunk);
}

}  // namespace trainer::loss
