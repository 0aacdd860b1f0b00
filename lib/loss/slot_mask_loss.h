// The static step's mask loss over positive slots, computed a chunk of slots at a time and
// recomputed in backward, so its memory is one chunk's, not every slot's.
//
// Why: with static shapes the mask loss runs on P = topk x max_instances slots per image (1000 at
// the defaults), most of them fillers. Composed from ATen ops, each (B, P, h, w) temporary
// (logits, target masks, BCE, the cropped BCE) and what autograd keeps of them is 1.6 GB at
// 640 px, batch 16 (h = w = 160): several GB for a term the eager step computes on its few
// positives. Here autograd keeps only the inputs; forward and backward walk the slots in chunks
// whose size depends on the shapes alone (still one static graph). The value and the gradients
// are those of the composition: BCE-with-logits per pixel, zeroed outside the slot's box, mean
// over the pixels, times the slot's weight, summed.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace trainer::loss {

struct SlotMaskInputs {
  at::Tensor coefficients;  // (B, P, nm) each slot's mask coefficients (differentiable)
  at::Tensor protos;        // (B, nm, h, w) prototypes (differentiable)
  at::Tensor masks;         // overlap: (B, h, w) GT index + 1 per pixel; else (B, M, h, w)
  bool overlap = false;
  at::Tensor gt_row;  // (B, P) int64: the GT of each slot
  at::Tensor boxes;   // (B, P, 4) x1 y1 x2 y2 in mask pixels: the crop
  at::Tensor weight;  // (B, P) float: each slot's factor (0 for a filler)
};

// Slots per chunk so that one (B, chunk, h, w) fp32 temporary stays within about 128 MiB.
int64_t slot_mask_chunk(int64_t batch, int64_t slots, int64_t height, int64_t width);

// sum over (b, p) of weight[b, p] x mean over the pixels of the box-cropped BCE-with-logits of
// (coefficients[b, p] . protos[b]) against the slot's GT mask. Differentiable in coefficients
// and protos. Under autocast the mask logits' matmul runs in the autocast dtype (forward and
// the recomputation alike) and the BCE in fp32, as the composed ops do. chunk <= 0: from
// slot_mask_chunk().
at::Tensor slot_mask_loss(const SlotMaskInputs& in, int64_t chunk = 0);

}  // namespace trainer::loss
