// One segmentation head's loss; see segment_head_loss.h.
#include "loss/segment_head_loss.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "loss/segment_assigner.h"
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
                         gt.labels, gt.bboxes, gt.mask, hooks);
  } else {
    a = head_.assign(p, gt);
  }
  const auto det = head_.box_cls_dfl(p, a);  // [box, cls, dfl]
  at::Tensor seg = at::zeros({}, det.options()), sem = at::zeros({}, det.options());
  const auto fg = a.fg_mask;
  if (fg.any().item<bool>()) {
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

}  // namespace trainer::loss
