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

// Static shapes: the IoU of the predicted mask of each picked anchor with its GT's mask: picks
// (B, M, k) anchor indices (each GT's top k) -> (B, M, k), image by image (a mask per pick, M k
// of them per image, whatever the number of anchors).
at::Tensor picked_mask_iou(const MaskAssignInputs& masks, const at::Tensor& picks);

// Static shapes: mask_aware_overlaps on every (image, GT, anchor) entry. pair_mask (B, M, A) the
// candidates, iou (B, M, A) their box CIoU (0 elsewhere), scores (B, M, A) each anchor's
// probability of the GT's class. The mask IoU is kept on each GT's top min(3 topk, A) candidates
// by the same metric (picked_mask_iou); (B, M, A), 0 off the candidates.
at::Tensor dense_mask_aware_overlaps(const at::Tensor& pair_mask, const at::Tensor& iou,
                                     const at::Tensor& scores, const AssignerOptions& options,
                                     const MaskAssignInputs& masks);

// The hooks for TaskAlignedAssigner (pair_overlaps, and dense_overlaps for static shapes):
// pd_scores (B, A, nc) probabilities and gt_labels (B, M, 1) as given to the assigner (the pair
// scores are read from them).
AssignerHooks segment_assigner_hooks(const AssignerOptions& options, const at::Tensor& pd_scores,
                                     const at::Tensor& gt_labels, MaskAssignInputs masks);

}  // namespace trainer::loss
