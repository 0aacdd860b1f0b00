// The mask-aware overlap of YOLO26-seg's assigner; see segment_assigner.h.
// Tested by tests/loss/test_segment_loss.cpp: binary_mask_iou, mask_aware_overlaps by hand
//   (picked_mask_iou in test_static_loss).
#include "loss/segment_assigner.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "model/mask_ops.h"

namespace trainer::loss {

at::Tensor binary_mask_iou(const at::Tensor& gt, const at::Tensor& pred) {
  // 0/1 sums below 2^24 are exact in fp32 (a 160 x 160 mask has 25,600 pixels).
  const auto inter = gt.matmul(pred.t());  // (m, n)
  const auto uni = gt.sum(-1).unsqueeze(-1) + pred.sum(-1).unsqueeze(0) - inter;
  return inter / uni.clamp_min(1.0);
}

at::Tensor mask_aware_overlaps(const at::Tensor& pairs, const at::Tensor& iou,
                               const at::Tensor& scores, const AssignerOptions& options,
                               int64_t num_gt, const MaskAssignInputs& masks) {
  const int64_t bs = masks.coefficients.size(0), na = masks.coefficients.size(1);
  const auto b = pairs.select(1, 0), g = pairs.select(1, 1), a = pairs.select(1, 2);
  // Each GT's best pairs by the box alignment metric (eps keeps zero-metric pairs selectable).
  auto dense = at::zeros({bs, num_gt, na}, iou.options());
  dense.index_put_({b, g, a}, scores.pow(options.alpha) * iou.pow(options.beta) + options.eps);
  const int64_t k = std::min<int64_t>(3 * options.topk, na);
  const auto top = std::get<1>(dense.topk(k, -1));
  const auto chosen = at::zeros({bs, num_gt, na}, pairs.options().dtype(at::kBool))
                          .scatter_(-1, top, true)
                          .index({b, g, a});  // (P)
  auto mask_iou = at::zeros_like(iou);
  const int64_t mh = masks.protos.size(2), mw = masks.protos.size(3);
  for (int64_t img = 0; img < bs; ++img) {
    const auto sel = chosen.logical_and(b.eq(img)).nonzero().squeeze(1);  // pair indices
    if (sel.numel() == 0) continue;
    // Each selected anchor's mask once.
    const auto [anchors, inverse, counts] =
        at::_unique2(a.index({sel}), /*sorted=*/true, /*return_inverse=*/true);
    const auto coef = masks.coefficients[img].index({anchors});  // (n, nm)
    const auto logits = model::mask_logits(coef, masks.protos[img]);
    const auto boxes = masks.boxes[img].index({anchors}) * masks.mask_scale;
    const auto pred = model::crop_mask(logits.gt(0).to(at::kFloat), boxes).view({-1, mh * mw});
    const auto gt = masks.gt_masks[img].view({masks.gt_masks.size(1), mh * mw}).to(at::kFloat);
    const auto ious = binary_mask_iou(gt, pred);  // (M', n)
    mask_iou.index_put_({sel}, ious.index({g.index({sel}), inverse}));
  }
  return (iou + mask_iou) / 2;
}

at::Tensor picked_mask_iou(const MaskAssignInputs& masks, const at::Tensor& picks) {
  const int64_t bs = picks.size(0), num_gt = picks.size(1), k = picks.size(2);
  const int64_t mh = masks.protos.size(2), mw = masks.protos.size(3);
  std::vector<at::Tensor> per_image;  // B iterations: a count the config sets
  for (int64_t img = 0; img < bs; ++img) {
    const auto anchors = picks[img].reshape({-1});  // (M k)
    const auto logits =
        model::mask_logits(masks.coefficients[img].index_select(0, anchors), masks.protos[img]);
    const auto boxes = masks.boxes[img].index_select(0, anchors) * masks.mask_scale;
    const auto pred = model::crop_mask(logits.gt(0).to(at::kFloat), boxes).view({num_gt, k, -1});
    const auto gt =
        masks.gt_masks[img].narrow(0, 0, num_gt).reshape({num_gt, 1, mh * mw}).to(at::kFloat);
    // binary_mask_iou's sums, pair by pair (0/1 sums below 2^24 are exact in fp32).
    const auto inter = (pred * gt).sum(-1);
    const auto uni = gt.sum(-1) + pred.sum(-1) - inter;
    per_image.push_back(inter / uni.clamp_min(1.0));  // (M, k)
  }
  return at::stack(per_image);
}

at::Tensor dense_mask_aware_overlaps(const at::Tensor& pair_mask, const at::Tensor& iou,
                                     const at::Tensor& scores, const AssignerOptions& options,
                                     const MaskAssignInputs& masks) {
  const int64_t na = iou.size(-1);
  const auto zero = at::zeros({}, iou.options());
  // Each GT's best candidates by the box alignment metric (eps keeps zero-metric pairs selectable).
  const auto metric =
      at::where(pair_mask, scores.pow(options.alpha) * iou.pow(options.beta) + options.eps, zero);
  const int64_t k = std::min<int64_t>(3 * options.topk, na);
  const auto top = std::get<1>(metric.topk(k, -1));  // (B, M, k)
  // The mask IoU of those pairs only (a mask per pick, not per anchor), placed at their anchors.
  const auto picked = at::zeros_like(iou).scatter_(-1, top, picked_mask_iou(masks, top));
  const auto chosen = at::zeros_like(pair_mask).scatter_(-1, top, true).logical_and(pair_mask);
  const auto mask_iou = at::where(chosen, picked, zero);
  return at::where(pair_mask, (iou + mask_iou) / 2, zero);
}

AssignerHooks segment_assigner_hooks(const AssignerOptions& options, const at::Tensor& pd_scores,
                                     const at::Tensor& gt_labels, MaskAssignInputs masks) {
  AssignerHooks hooks;
  const int64_t num_gt = gt_labels.size(1);
  const MaskAssignInputs hooks_masks = masks;  // tensors are shared, not copied
  hooks.pair_overlaps = [options, pd_scores, gt_labels, masks = std::move(masks), num_gt](
                            const at::Tensor& pairs, const at::Tensor& iou) {
    const auto b = pairs.select(1, 0), g = pairs.select(1, 1), a = pairs.select(1, 2);
    const auto labels = gt_labels.index({b, g}).select(-1, 0).to(at::kLong);
    const auto scores = pd_scores.index({b, a, labels});
    return mask_aware_overlaps(pairs, iou, scores, options, num_gt, masks);
  };
  hooks.dense_overlaps = [options, pd_scores, gt_labels, masks = hooks_masks](
                             const at::Tensor& pair_mask, const at::Tensor& iou) {
    const auto cls = gt_labels.squeeze(-1).to(at::kLong).unsqueeze(-1).expand(pair_mask.sizes());
    const auto scores = pd_scores.transpose(1, 2).gather(1, cls);  // (B, M, A)
    return dense_mask_aware_overlaps(pair_mask, iou, scores, options, masks);
  };
  return hooks;
}

}  // namespace trainer::loss
