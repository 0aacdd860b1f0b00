// YOLO26-seg's task-aligned assigner (the reference's SegTaskAlignedAssigner, reference-tasks.md
// 4.4): the detection assigner whose overlap is the mean of the box CIoU and the IoU of the
// predicted mask with the ground-truth mask.
//
// Why: with mask quality in the overlap, positives, conflicts and the soft class targets favour
// anchors whose masks are right, so the score ranks detections by mask quality. Decoding a mask
// for every candidate pair would be costly, so only each GT's best 3 x topk pairs by the box
// alignment metric get a mask IoU; the others count it as 0. Built on TaskAlignedAssigner's
// pair_overlaps hook, so detection's assignment is untouched.
#pragma once

#include <ATen/core/Tensor.h>

#include "loss/task_aligned_assigner.h"

namespace trainer::loss {

// What the mask IoU of a pair needs (all detached, fp32).
struct MaskAssignInputs {
  at::Tensor coefficients;   // (B, A, nm) predicted mask coefficients
  at::Tensor boxes;          // (B, A, 4) predicted boxes, xyxy input pixels
  double mask_scale = 0.25;  // prototype pixels per input pixel
  at::Tensor protos;         // (B, nm, h, w)
  at::Tensor gt_masks;       // (B, M', h, w) bool, GT j of image b at [b, j] (M' >= M)
};

// The IoU of binary masks, exact: pred (n, h * w) and gt (m, h * w) 0/1 floats -> (m, n)
// intersection / max(union, 1).
at::Tensor binary_mask_iou(const at::Tensor& gt, const at::Tensor& pred);

// The overlap of each candidate pair, (iou + mask iou) / 2: pairs (P, 3) [image, gt, anchor] (the
// order of a boolean index of the (B, M, A) pair mask), their box CIoU (P) clamped >= 0, and their
// class scores (P) (the predicted probability of the GT's class). The mask IoU is computed for the
// pairs among each GT's top min(3 topk, A) anchors by score^alpha CIoU^beta + eps, 0 for the rest.
// The predicted mask: (coefficients x prototypes) > 0, cropped to the predicted box scaled to
// prototype pixels.
at::Tensor mask_aware_overlaps(const at::Tensor& pairs, const at::Tensor& iou,
                               const at::Tensor& scores, const AssignerOptions& options,
                               int64_t num_gt, const MaskAssignInputs& masks);

// The hooks for TaskAlignedAssigner: pd_scores (B, A, nc) probabilities and gt_labels (B, M, 1)
// as given to the assigner (the pair scores are read from them).
AssignerHooks segment_assigner_hooks(const AssignerOptions& options, const at::Tensor& pd_scores,
                                     const at::Tensor& gt_labels, MaskAssignInputs masks);

}  // namespace trainer::loss
