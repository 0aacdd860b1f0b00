// The loss of one segmentation head (reference-tasks.md 4.4): detection's box / class / DFL-or-L1
// terms on an assignment (YOLO26: the mask-aware assigner), the instance mask loss, and YOLO26's
// semantic loss.
//   mask: per foreground anchor, BCE-with-logits of (coefficients x prototypes) against the
//     assigned GT's mask, cropped to the GT box, averaged over the mask and divided by the box's
//     area fraction; summed and divided by the number of foreground anchors; x box gain.
//   semantic: 0.5 BCE (mean) + 0.5 Dice of the semantic logits against the one-hot class map of
//     the covered pixels (nearest-downsampled to the logits), x box gain; only with a foreground.
//
// Why its own unit: the end-to-end loss runs it on both branches with different top-k (and
// detached prototypes for the one-to-one branch), and each term has numbers worth checking.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>

#include <string>
#include <vector>

#include "loss/gt_targets.h"
#include "loss/head_loss.h"

namespace trainer::loss {

// Item names: [box_loss, seg_loss, cls_loss, dfl_loss | l1_loss (reg_max 1), sem_loss].
std::vector<std::string> segment_loss_item_names(int64_t reg_max);

// Mask predictions of one head in the loss layout (fp32).
struct MaskPredictions {
  at::Tensor coefficients;  // (B, A, nm)
  at::Tensor protos;        // (B, nm, h, w)
  at::Tensor semantic;      // (B, nc, h', w') logits; undefined without (YOLO11, eval mode)
};

// The batch's masks as the loss reads them (LossTargets::masks and the rows of the labels).
struct MaskTargets {
  at::Tensor masks;  // overlap: (B, h, w) int, j + 1 = row j of the image; else (n, h, w)
  bool overlap = true;
  at::Tensor batch_idx;  // (n) int64 image of each label row
  at::Tensor classes;    // (n) int64 class of each label row
  // Static shapes with per-object masks: `masks` is (B, M, h, w), row j of image b at [b, j]
  // (pack_rows); batch_idx and classes are not read.
  bool padded = false;
  // Derived once per batch by the caller when both branches of an end-to-end loss read them
  // (SegmentLoss); a head loss derives what is left undefined itself.
  at::Tensor assigner_masks{};   // assigner_gt_masks at the prototypes' size
  at::Tensor semantic_target{};  // semantic_target_at the semantic logits' size
};

// The reference's crop-normalised mask loss of one image: gt (n, h, w) 0/1, coefficients (n, nm),
// protos (nm, h, w), boxes (n, 4) xyxy in mask pixels, area (n) box area / image area:
// sum_i mean_hw(crop(BCE(coef_i x protos, gt_i), box_i)) / area_i.
at::Tensor single_mask_loss(const at::Tensor& gt, const at::Tensor& coefficients,
                            const at::Tensor& protos, const at::Tensor& boxes,
                            const at::Tensor& area);

// 1 - mean over (b, c) of (2 sum(sigmoid(p) t) + smooth) / (sum sigmoid(p) + sum t + smooth), sums
// over the pixels; logits and target (B, C, h, w).
at::Tensor multi_channel_dice_loss(const at::Tensor& logits, const at::Tensor& target,
                                   double smooth = 1.0);

// The semantic target: (B, nc, h, w) one-hot class of the instance that covers each pixel (the
// smallest one when several do, as the overlap index draws them), 0 where none does.
at::Tensor semantic_targets(const MaskTargets& targets, int64_t batch_size, int64_t num_classes);

// Static shapes: semantic_targets from masks in the static layout (overlap: (B, h, w) index image;
// else padded (B, M, h, w)) and the packed labels (B, M, 1), computed with fixed shapes (a class
// table gathered per pixel; the smallest covering object by a min over the M rows).
at::Tensor static_semantic_targets(const at::Tensor& masks, bool overlap, const at::Tensor& labels,
                                   int64_t num_classes);
at::Tensor static_semantic_target_at(const at::Tensor& masks, bool overlap,
                                     const at::Tensor& labels, int64_t num_classes, int64_t h,
                                     int64_t w);

// semantic_targets nearest-resized to (h, w) (the semantic logits' size), as the reference's
// BCEDiceLoss resizes its target.
at::Tensor semantic_target_at(const MaskTargets& targets, int64_t batch_size, int64_t num_classes,
                              int64_t h, int64_t w);

// The GT masks per (image, padded GT slot) at (h, w), bool (B, m, h, w), for the mask-aware
// assigner (nearest-resized when the masks have another size).
at::Tensor assigner_gt_masks(const MaskTargets& targets, int64_t batch_size, int64_t m, int64_t h,
                             int64_t w);

class SegmentHeadLoss {
 public:
  // head: the detection head loss of this branch (its top-k are this branch's). mask_aware: the
  // YOLO26 assigner (segment_assigner.h); box_gain scales the mask and semantic terms.
  SegmentHeadLoss(HeadLoss head, bool mask_aware, double box_gain);

  // Flattens the per-level coefficients (B, nm, H, W) to (B, A, nm); prototypes and semantic
  // logits cast to fp32 (detached when `detach`, as the one-to-one branch sees them).
  MaskPredictions parse(const std::vector<at::Tensor>& coefficients, const at::Tensor& protos,
                        const at::Tensor& semantic, bool detach) const;

  // (5,) gain-scaled [box, seg, cls, dfl | l1, sem], with gradient.
  at::Tensor operator()(const HeadPredictions& pred, const MaskPredictions& masks,
                        const GtTargets& gt, const MaskTargets& targets) const;

  const HeadLoss& head() const { return head_; }
  bool mask_aware() const { return mask_aware_; }

 private:
  // [seg, sem] of a static-shapes assignment: the mask loss on the positives gathered into slots
  // (positive_slots.h), the semantic loss always computed and multiplied by (any positive).
  std::array<at::Tensor, 2> static_mask_terms(const HeadPredictions& pred,
                                              const MaskPredictions& masks, const Assignment& a,
                                              const GtTargets& gt,
                                              const MaskTargets& targets) const;

  HeadLoss head_;
  bool mask_aware_;
  double box_gain_;
};

}  // namespace trainer::loss
