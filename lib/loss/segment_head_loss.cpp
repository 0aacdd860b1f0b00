// One segmentation head's loss; see segment_head_loss.h.
// Tested by tests/loss/test_segment_loss.cpp: single_mask_loss, multi_channel_dice_loss,
//   semantic_targets by hand, errors without masks/coefficients.
#include "loss/segment_head_loss.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "loss/positive_slots.h"
#include "loss/segment_assigner.h"
#include "loss/slot_mask_loss.h"
#include "model/mask_ops.h"

namespace trainer::loss {

std::vector<std::string> segment_loss_item_names(int64_t reg_max) {
  return {"box_loss", "seg_loss", "cls_loss", reg_max > 1 ? "dfl_loss" : "l1_loss", "sem_loss"};
}

at::Tensor single_mask_loss(const at::Tensor& gt, const at::Tensor& coefficients,
                            const at::Tensor& protos, const at::Tensor& boxes,
                            const at::Tensor& area) {
  const auto logits = model::mask_logits(coefficients, protos);  // (n, h, w)
  const auto bce = at::binary_cross_entropy_with_logits(logits, gt, {}, {}, at::Reduction::None);
  return (model::crop_mask(bce, boxes).mean({1, 2}) / area).sum();
}

at::Tensor multi_channel_dice_loss(const at::Tensor& logits, const at::Tensor& target,
                                   double smooth) {
  const auto p = logits.sigmoid();
  const auto inter = (p * target).sum({2, 3});
  const auto uni = p.sum({2, 3}) + target.sum({2, 3});
  const auto dice = (2.0 * inter + smooth) / (uni + smooth);
  return (1.0 - dice).mean(1).mean();
}

at::Tensor semantic_targets(const MaskTargets& t, int64_t batch_size, int64_t num_classes) {
  const int64_t h = t.masks.size(-2), w = t.masks.size(-1);
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(t.masks.device());
  auto out = at::zeros({batch_size, num_classes, h * w}, opts);
  const auto batch_idx = t.batch_idx.to(t.masks.device());
  const auto classes = t.classes.to(t.masks.device());
  for (int64_t b = 0; b < batch_size; ++b) {
    const auto rows = batch_idx.eq(b).nonzero().squeeze(1);
    if (rows.numel() == 0) continue;
    const auto cls = classes.index({rows});  // (m) in row order
    at::Tensor index, present;  // (h * w) class of the covering instance, covered or not
    if (t.overlap) {
      const auto pixels = t.masks[b].reshape({-1}).to(at::kLong);  // 0 or row + 1
      present = pixels.gt(0);
      index = cls.index({(pixels - 1).clamp_min(0)});
    } else {
      // The smallest covering instance wins, as in the overlap index image.
      const auto m = t.masks.index({rows}).reshape({rows.numel(), -1}).gt(0);  // (m, h * w)
      const auto area = m.sum(1, /*keepdim=*/true).to(at::kFloat);
      const auto big = area.max() + 1;
      const auto key = at::where(m, area.expand_as(m), big);
      index = cls.index({std::get<1>(key.min(0))});
      present = m.any(0);
    }
    out[b].scatter_(0, index.unsqueeze(0), present.to(at::kFloat).unsqueeze(0));
  }
  return out.view({batch_size, num_classes, h, w});
}

at::Tensor static_semantic_targets(const at::Tensor& masks, bool overlap, const at::Tensor& labels,
                                   int64_t num_classes) {
  const int64_t bs = labels.size(0), m = labels.size(1);
  const int64_t h = masks.size(-2), w = masks.size(-1);
  const auto cls = labels.reshape({bs, m}).to(masks.device()).to(at::kLong);
  at::Tensor index, present;  // (B, h * w) class of the covering object, covered or not
  if (overlap) {
    const auto pixels = masks.reshape({bs, h * w}).to(at::kLong);  // 0 or row + 1
    present = pixels.gt(0);
    index = cls.gather(1, (pixels - 1).clamp_min(0));
  } else {
    // The smallest covering object wins; padding rows cover nothing.
    const auto covered = masks.reshape({bs, m, h * w}).gt(0);
    const auto area = covered.sum(2, /*keepdim=*/true).to(at::kFloat);
    const auto key = at::where(covered, area.expand_as(covered),
                               at::scalar_tensor(static_cast<double>(h * w + 1), area.options()));
    index = cls.gather(1, std::get<1>(key.min(1)));
    present = covered.any(1);
  }
  auto out = at::zeros({bs, num_classes, h * w},
                       at::TensorOptions().dtype(at::kFloat).device(masks.device()));
  out.scatter_(1, index.unsqueeze(1), present.to(at::kFloat).unsqueeze(1));
  return out.view({bs, num_classes, h, w});
}

at::Tensor static_semantic_target_at(const at::Tensor& masks, bool overlap,
                                     const at::Tensor& labels, int64_t num_classes, int64_t h,
                                     int64_t w) {
  const auto target = static_semantic_targets(masks, overlap, labels, num_classes);
  return target.size(2) == h && target.size(3) == w ? target
                                                    : at::upsample_nearest2d(target, {h, w});
}

SegmentHeadLoss::SegmentHeadLoss(HeadLoss head, bool mask_aware, double box_gain)
    : head_(std::move(head)), mask_aware_(mask_aware), box_gain_(box_gain) {}

MaskPredictions SegmentHeadLoss::parse(const std::vector<at::Tensor>& coefficients,
                                       const at::Tensor& protos, const at::Tensor& semantic,
                                       bool detach) const {
  if (coefficients.empty() || !protos.defined()) {
    throw std::invalid_argument("segment loss: the outputs have no mask coefficients or protos");
  }
  MaskPredictions out;
  std::vector<at::Tensor> flat;
  for (const auto& level : coefficients) flat.push_back(level.to(at::kFloat).flatten(2));
  out.coefficients = at::cat(flat, 2).permute({0, 2, 1}).contiguous();  // (B, A, nm)
  out.protos = detach ? protos.detach().to(at::kFloat) : protos.to(at::kFloat);
  if (semantic.defined()) {
    out.semantic = detach ? semantic.detach().to(at::kFloat) : semantic.to(at::kFloat);
  }
  return out;
}

at::Tensor semantic_target_at(const MaskTargets& targets, int64_t batch_size, int64_t num_classes,
                              int64_t h, int64_t w) {
  const auto target = semantic_targets(targets, batch_size, num_classes);
  return target.size(2) == h && target.size(3) == w ? target
                                                    : at::upsample_nearest2d(target, {h, w});
}

at::Tensor assigner_gt_masks(const MaskTargets& t, int64_t batch_size, int64_t m, int64_t h,
                             int64_t w) {
  at::Tensor masks = t.masks;
  if (t.padded) {  // static shapes: (B, M, h, w) already
    const auto resized = masks.size(-2) != h || masks.size(-1) != w
                             ? at::upsample_nearest2d(masks.to(at::kFloat), {h, w})
                             : masks;
    return resized.narrow(1, 0, m).gt(0.5);
  }
  if (masks.numel() > 0 && (masks.size(-2) != h || masks.size(-1) != w)) {
    masks = at::upsample_nearest2d(masks.unsqueeze(0).to(at::kFloat), {h, w}).squeeze(0);
  }
  const auto opts = at::TensorOptions().dtype(at::kBool).device(masks.device());
  if (t.overlap) {
    const auto ids = at::arange(1, m + 1, masks.options().dtype(at::kLong)).view({1, m, 1, 1});
    return masks.to(at::kLong).unsqueeze(1).eq(ids);  // (B, M, h, w)
  }
  auto out = at::zeros({batch_size, m, h, w}, opts);
  const auto batch_idx = t.batch_idx.to(masks.device());
  for (int64_t b = 0; b < batch_size; ++b) {
    const auto rows = batch_idx.eq(b).nonzero().squeeze(1);
    if (rows.numel() == 0) continue;
    out[b].narrow(0, 0, rows.numel()).copy_(masks.index({rows}).gt(0.5));
  }
  return out;
}

at::Tensor SegmentHeadLoss::operator()(const HeadPredictions& p, const MaskPredictions& mp,
                                       const GtTargets& gt, const MaskTargets& targets) const {
  const int64_t bs = mp.protos.size(0);
  const int64_t ph = mp.protos.size(2), pw = mp.protos.size(3);
  Assignment a;
  if (mask_aware_) {
    MaskAssignInputs in;
    in.coefficients = mp.coefficients.detach();
    in.boxes = p.pred_bboxes.detach() * p.stride;
    in.mask_scale = static_cast<double>(ph) / p.image_h;
    in.protos = mp.protos.detach();
    in.gt_masks = (targets.assigner_masks.defined()
                       ? targets.assigner_masks
                       : assigner_gt_masks(targets, bs, gt.labels.size(1), ph, pw))
                      .to(mp.protos.device());
    const auto scores = p.pred_scores.detach().sigmoid();
    const auto hooks =
        segment_assigner_hooks(head_.assigner().options(), scores, gt.labels, std::move(in));
    a = head_.assigner()(scores, p.pred_bboxes.detach() * p.stride, p.anchor_points * p.stride,
                         gt.labels, gt.bboxes, gt.mask, hooks, gt.static_shapes);
  } else {
    a = head_.assign(p, gt);
  }
  const auto det = head_.box_cls_dfl(p, a);  // [box, cls, dfl]
  at::Tensor seg = at::zeros({}, det.options()), sem = at::zeros({}, det.options());
  const auto fg = a.fg_mask;
  if (a.static_shapes) {
    const auto terms = static_mask_terms(p, mp, a, gt, targets);
    seg = terms[0];
    if (terms[1].defined()) sem = terms[1];
  } else if (fg.any().item<bool>()) {
    const auto masks = targets.masks.to(mp.protos.device());
    const int64_t mh = masks.size(-2), mw = masks.size(-1);
    // Ground truth at another size (mask_ratio != 4, multi-scale): the prototypes follow it.
    const auto protos =
        (mh != ph || mw != pw) ? at::upsample_bilinear2d(mp.protos, {mh, mw}, false) : mp.protos;
    const auto image = at::tensor({p.image_w, p.image_h, p.image_w, p.image_h}, det.options());
    const auto normalised = a.target_bboxes / image;  // (B, A, 4)
    const auto area = (normalised.select(-1, 2) - normalised.select(-1, 0)) *
                      (normalised.select(-1, 3) - normalised.select(-1, 1));
    const auto scale = at::tensor({double(mw), double(mh), double(mw), double(mh)}, det.options());
    const auto boxes = normalised * scale;
    const auto batch_idx = targets.batch_idx.to(masks.device());
    for (int64_t b = 0; b < bs; ++b) {
      const auto fg_b = fg[b];
      if (!fg_b.any().item<bool>()) continue;
      const auto idx = a.target_gt_idx[b].index({fg_b});  // (n) GT slot of each positive
      at::Tensor gt_mask;
      if (targets.overlap) {
        gt_mask = masks[b].unsqueeze(0).eq((idx + 1).view({-1, 1, 1})).to(at::kFloat);
      } else {
        gt_mask = masks.index({batch_idx.eq(b)}).index({idx}).to(at::kFloat);
      }
      seg = seg + single_mask_loss(gt_mask, mp.coefficients[b].index({fg_b}), protos[b],
                                   boxes[b].index({fg_b}), area[b].index({fg_b}));
    }
    seg = seg / fg.sum();
    if (mp.semantic.defined()) {
      const auto target = targets.semantic_target.defined()
                              ? targets.semantic_target
                              : semantic_target_at(targets, bs, mp.semantic.size(1),
                                                   mp.semantic.size(2), mp.semantic.size(3));
      sem = 0.5 * at::binary_cross_entropy_with_logits(mp.semantic, target) +
            0.5 * multi_channel_dice_loss(mp.semantic, target);
    }
  } else {
    // Zeros that keep the mask outputs in the graph.
    seg = (mp.protos * 0).sum() + (mp.coefficients * 0).sum();
    if (mp.semantic.defined()) sem = (mp.semantic * 0).sum();
  }
  return at::stack({det[0], seg * box_gain_, det[1], det[2], sem * box_gain_});
}

std::array<at::Tensor, 2> SegmentHeadLoss::static_mask_terms(const HeadPredictions& p,
                                                             const MaskPredictions& mp,
                                                             const Assignment& a,
                                                             const GtTargets& gt,
                                                             const MaskTargets& targets) const {
  const auto& options = head_.assigner().options();
  const int64_t na = a.fg_mask.size(1), m = gt.labels.size(1);
  const int64_t ph = mp.protos.size(2), pw = mp.protos.size(3);
  const auto& masks = targets.masks;
  const int64_t mh = masks.size(-2), mw = masks.size(-1);
  const auto protos =
      (mh != ph || mw != pw) ? at::upsample_bilinear2d(mp.protos, {mh, mw}, false) : mp.protos;

  // The positives in a fixed number of slots per image; fillers weigh 0.
  const auto slots =
      positive_slots(a.fg_mask, positive_capacity(na, m, options.topk, options.topk2));
  const auto gt_row = a.target_gt_idx.gather(1, slots.anchor);  // (B, P)
  // The target box of each slot, normalised by the input size (scalars: no host tensor).
  const auto box = gather_slots(a.target_bboxes, slots.anchor);  // (B, P, 4) input pixels
  const auto x1 = box.select(-1, 0) / p.image_w, y1 = box.select(-1, 1) / p.image_h;
  const auto x2 = box.select(-1, 2) / p.image_w, y2 = box.select(-1, 3) / p.image_h;
  const auto filled = slots.weight.gt(0);
  const auto area = at::where(filled, (x2 - x1) * (y2 - y1), at::ones({}, box.options()));
  SlotMaskInputs in;
  in.coefficients = gather_slots(mp.coefficients, slots.anchor);  // (B, P, nm)
  in.protos = protos;
  in.masks = masks;
  in.overlap = targets.overlap;
  in.gt_row = gt_row;
  in.boxes = at::stack({x1 * static_cast<double>(mw), y1 * static_cast<double>(mh),
                        x2 * static_cast<double>(mw), y2 * static_cast<double>(mh)},
                       -1);
  in.weight = slots.weight / area;
  // Chunked with recomputation (slot_mask_loss.h): (B, P, h, w) is GBs at 640 px.
  const auto weighted_sum = slot_mask_loss(in);
  std::array<at::Tensor, 2> terms;
  terms[0] = weighted_sum / slots.positives;
  if (mp.semantic.defined()) {
    const auto target =
        targets.semantic_target.defined()
            ? targets.semantic_target
            : static_semantic_target_at(masks, targets.overlap, gt.labels, mp.semantic.size(1),
                                        mp.semantic.size(2), mp.semantic.size(3));
    const auto any_positive = a.fg_mask.any().to(at::kFloat);
    terms[1] = (0.5 * at::binary_cross_entropy_with_logits(mp.semantic, target) +
                0.5 * multi_channel_dice_loss(mp.semantic, target)) *
               any_positive;
  }
  return terms;
}

}  // namespace trainer::loss
