// The static task-aligned assigner's dense passes, fused for the CPU.
//
// Why: with static shapes the assigner works on every (image, GT, anchor) entry of a (B, M, A)
// grid, M = max_instances. Written as ATen ops that is about 45 element-wise passes over the grid
// per head; a GPU runs them at memory speed, a 2-core CPU spends more on them than on the rest of
// the loss (BENCHMARKS.md "Static shapes"). These loops make the same decisions in two fused
// passes and a sparse walk over each GT's top-k picks. The top-k selections stay ATen's, so ties
// break as in the element-wise path. dense_positives_cpu gives select_positives' bits for the same
// inputs (tests/loss/test_static_loss.cpp). dense_pairs_cpu does not quite: its CIoU and its
// powers are scalar float code (std::atan, std::pow) where ATen vectorises (SLEEF), up to an ulp
// apart, so metrics within an ulp of each other can rank differently; and a NaN GT coordinate
// makes no candidate here where ATen's minimum would propagate it.
#pragma once

#include <ATen/core/Tensor.h>

#include "loss/task_aligned_assigner.h"

namespace trainer::loss {

struct DensePairsCpu {
  at::Tensor pair_mask;     // (B, M, A) bool: anchor inside the (STAL-widened) GT, GT valid
  at::Tensor overlaps;      // (B, M, A) float: max(CIoU, 0) of the pair, 0 off the candidates
  at::Tensor align_metric;  // (B, M, A) float: score^alpha * overlap^beta, score and overlap 0 off
                            // the candidates
};

// Detection's candidates (select_candidates_in_gts with STAL side options.strides[1] and margin
// options.eps), CIoU overlaps and alignment metric (the anchor's score of the GT's class to the
// alpha times the overlap to the beta) in one pass. pd_scores (B, A, nc) (any strides),
// pd_bboxes (B, A, 4) xyxy, anchor_points (A, 2), gt_labels (B, M, 1), gt_bboxes (B, M, 4) xyxy,
// mask_gt (B, M, 1); fp32 CPU tensors (mask_gt any dtype). The powers are ATen's special cases
// where it has one (0.5: a square root, 2, 3), otherwise std::pow: within an ulp of ATen's
// vectorised pow, not always its bits.
DensePairsCpu dense_pairs_cpu(const at::Tensor& pd_scores, const at::Tensor& pd_bboxes,
                              const at::Tensor& anchor_points, const at::Tensor& gt_labels,
                              const at::Tensor& gt_bboxes, const at::Tensor& mask_gt,
                              const AssignerOptions& options);

// select_positives (task_aligned_assigner.h) with the same bits: each valid GT's top-k candidates,
// anchors claimed twice given to the GT of highest overlap, the second top-k2 pass when topk2 !=
// topk, the assigned GT per anchor and the alignment normalisation. align_metric, overlaps
// (B, M, A) fp32, pair_mask (B, M, A) bool, mask_gt (B, M, 1).
Positives dense_positives_cpu(const at::Tensor& align_metric, const at::Tensor& overlaps,
                              const at::Tensor& pair_mask, const at::Tensor& mask_gt, int64_t topk,
                              int64_t topk2, double eps);

}  // namespace trainer::loss
