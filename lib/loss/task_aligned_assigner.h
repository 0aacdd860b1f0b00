// The task-aligned assigner (TAL): which anchors learn which ground-truth box, and how strongly.
//
// Why: every loss term is computed from these picks. The steps and constants follow the
// reference's TaskAlignedAssigner (including the small-target rule "STAL" and the second top-k
// pass that gives the one-to-one head one positive per object), vectorised over the whole batch
// with GTs padded to the largest count per image.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

namespace trainer::loss {

struct AssignerOptions {
  int64_t num_classes = 80;
  int64_t topk = 10;   // candidates kept per GT by the alignment metric
  int64_t topk2 = -1;  // second pass after conflicts (-1 = same as topk = no second pass)
  double alpha = 0.5;  // power of the class score in the alignment metric
  double beta = 6.0;   // power of the CIoU
  double eps = 1e-9;
  std::vector<double> strides = {8, 16, 32};  // STAL: sides < strides[1] become strides[1]
  // Static shapes on the CPU in fp32: the fused passes of dense_assigner_cpu.h (same bits). Off,
  // the element-wise ATen form runs there too (the tests' oracle; what other devices run).
  bool fused_cpu = true;
};

struct Assignment {
  at::Tensor target_labels;    // (B, A) int64
  at::Tensor target_bboxes;    // (B, A, 4) xyxy, the assigned GT box (pixels)
  at::Tensor target_scores;    // (B, A, nc) one-hot class x normalised alignment on foreground
  at::Tensor fg_mask;          // (B, A) bool
  at::Tensor target_gt_idx;    // (B, A) int64 index of the assigned GT within its image
  bool static_shapes = false;  // made by the static path: losses use masks, not selections
};

// The steps, exposed for tests. Shapes: M = padded GTs per image, A = anchors.

// STAL's side (the reference's stride_val): strides[1], or strides[0] when there is one stride.
double stal_stride(const AssignerOptions& options);

// (B, M, A) bool: anchor centre strictly inside the GT (all four margins > eps), after the STAL
// widening of sides shorter than stal_stride() to it (centre kept) for valid GTs.
at::Tensor select_candidates_in_gts(const at::Tensor& anchor_points, const at::Tensor& gt_bboxes,
                                    const at::Tensor& mask_gt, const AssignerOptions& options);

// (B, M, A) float: 1 for the top-k anchors of each valid GT by `metric`, 0 elsewhere.
at::Tensor select_topk_candidates(const at::Tensor& metric, const at::Tensor& valid_gt,
                                  int64_t topk);

struct HighestOverlaps {
  at::Tensor target_gt_idx;  // (B, A) int64
  at::Tensor fg_mask;        // (B, A) float: positives per anchor (0 or 1 after this step)
  at::Tensor mask_pos;       // (B, M, A) float
};
// Anchors claimed by several GTs keep only the GT of highest overlap; then, if topk2 != topk,
// each GT keeps only its top-topk2 anchors by alignment among the surviving positives.
HighestOverlaps select_highest_overlaps(at::Tensor mask_pos, const at::Tensor& overlaps,
                                        const at::Tensor& align_metric, int64_t topk,
                                        int64_t topk2);

struct Positives {
  at::Tensor target_gt_idx;  // (B, A) int64: the anchor's GT, 0 on background
  at::Tensor fg_mask;        // (B, A) float: 1 on positives, 0 elsewhere
  at::Tensor norm;           // (B, A, 1): the anchor's soft-target scale
};
// From the alignment metric on, element-wise: select_topk_candidates over the candidate pairs,
// select_highest_overlaps, and the alignment normalisation (per GT, its anchors' metric rescaled
// so that the best one gets the GT's best overlap; per anchor, the largest over its GTs).
// align_metric, overlaps (B, M, A), pair_mask (B, M, A) bool, valid (B, M, 1) bool.
Positives select_positives(const at::Tensor& align_metric, const at::Tensor& overlaps,
                           const at::Tensor& pair_mask, const at::Tensor& valid,
                           const AssignerOptions& options);

// GT rows per chunk of the static assigner's dense overlaps: about 2^22 (image, GT, anchor)
// entries per chunk (64 MB of fp32 per temporary), at least one row. A function of B and A only.
int64_t dense_overlap_chunk(int64_t batch_size, int64_t anchors);

// Optional changes to the assignment, for tasks whose ground truth has more than a box (pose) or
// another kind of box (OBB). Left empty, the assignment is the detection one, bit for bit.
struct AssignerHooks {
  // Replaces the axis-aligned candidate test: (anchor_points (A, 2), gt_bboxes (B, M, D),
  // mask_gt (B, M, 1)) -> (B, M, A) bool (OBB: the anchor inside the rotated box).
  std::function<at::Tensor(const at::Tensor& anchor_points, const at::Tensor& gt_bboxes,
                           const at::Tensor& mask_gt)>
      candidates;
  // Replaces the CIoU of the candidate pairs: (gt (P, D), predicted (P, D)) -> (P) overlaps >= 0
  // (OBB: ProbIoU of xywhr boxes). The static path calls it broadcasting, (B, M, 1, D) with
  // (B, 1, A, D) -> (B, M, A): element-wise maths over the last dimension does both.
  std::function<at::Tensor(const at::Tensor& gt, const at::Tensor& predicted)> box_overlap;
  // (B, M, A) bool candidates inside the (STAL-widened) GTs -> the candidates kept.
  std::function<at::Tensor(const at::Tensor& in_gts)> gate_candidates;
  // The overlap of each candidate pair: pairs (P, 3) int64 [image, gt, anchor] in the order of a
  // boolean index with the (B, M, A) pair mask, and their box CIoU (P) clamped >= 0 -> (P).
  std::function<at::Tensor(const at::Tensor& pairs, const at::Tensor& iou)> pair_overlaps;
  // The static path's form of pair_overlaps: (pair_mask (B, M, A) bool, the box CIoU (B, M, A)
  // clamped >= 0 and 0 off the candidates) -> (B, M, A), 0 off the candidates. A task that sets
  // pair_overlaps sets this too for static shapes.
  std::function<at::Tensor(const at::Tensor& pair_mask, const at::Tensor& iou)> dense_overlaps;
};

class TaskAlignedAssigner {
 public:
  explicit TaskAlignedAssigner(AssignerOptions options);

  // pd_scores (B, A, nc) probabilities, pd_bboxes (B, A, 4) xyxy pixels, anchor_points (A, 2)
  // pixels, gt_labels (B, M, 1), gt_bboxes (B, M, 4) xyxy pixels, mask_gt (B, M, 1) valid rows.
  // Runs without gradient; with M = 0 everything is background. With the hooks `candidates` and
  // `box_overlap`, boxes may have another width D (OBB: 5, xywhr); target_bboxes has it too.
  // static_shapes: the overlaps of every (image, GT, anchor) are computed, in chunks of GT rows
  // whose size depends only on B and A, and kept where the pair is a candidate, instead of being
  // computed on the selected pairs (a selection's size depends on the data). Same assignment; the
  // hook `dense_overlaps` replaces `pair_overlaps` then.
  Assignment operator()(const at::Tensor& pd_scores, const at::Tensor& pd_bboxes,
                        const at::Tensor& anchor_points, const at::Tensor& gt_labels,
                        const at::Tensor& gt_bboxes, const at::Tensor& mask_gt,
                        bool static_shapes = false) const;
  // The same with the task's hooks.
  Assignment operator()(const at::Tensor& pd_scores, const at::Tensor& pd_bboxes,
                        const at::Tensor& anchor_points, const at::Tensor& gt_labels,
                        const at::Tensor& gt_bboxes, const at::Tensor& mask_gt,
                        const AssignerHooks& hooks, bool static_shapes = false) const;

  const AssignerOptions& options() const { return options_; }

 private:
  AssignerOptions options_;
};

}  // namespace trainer::loss
