// The oriented-box head loss; see obb_head_loss.h.
// Tested by tests/loss/test_obb_loss.cpp: rotated candidates with STAL, angle loss formula,
//   ObbHeadLoss assignment gives ProbIoU target, four finite items.
#include "loss/obb_head_loss.h"

#include <ATen/ATen.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "loss/bbox_loss.h"
#include "model/rotated_box_ops.h"

namespace trainer::loss {

at::Tensor select_candidates_in_rotated_gts(const at::Tensor& anchor_points,
                                            const at::Tensor& gt_bboxes, const at::Tensor& mask_gt,
                                            double stal_side) {
  const auto wh = gt_bboxes.narrow(-1, 2, 2);
  const auto small = wh.lt(stal_side).logical_and(mask_gt.to(at::kBool));
  const auto sides = at::where(small, at::scalar_tensor(stal_side, wh.options()), wh);
  // The corners as the reference's xywhr2xyxyxyxy: a = c + v1 + v2, b = c + v1 - v2,
  // d = c - v1 + v2 with v1 = (w/2)(cos, sin), v2 = (h/2)(-sin, cos).
  const auto centre = gt_bboxes.narrow(-1, 0, 2);
  const auto angle = gt_bboxes.narrow(-1, 4, 1);
  const auto cos = angle.cos(), sin = angle.sin();
  const auto w = sides.narrow(-1, 0, 1), h = sides.narrow(-1, 1, 1);
  const auto v1 = at::cat({w / 2 * cos, w / 2 * sin}, -1);
  const auto v2 = at::cat({-h / 2 * sin, h / 2 * cos}, -1);
  const auto a = centre + v1 + v2, b = centre + v1 - v2, d = centre - v1 + v2;  // (B, M, 2)
  const auto ab = (b - a).unsqueeze(2), ad = (d - a).unsqueeze(2);              // (B, M, 1, 2)
  const auto ap = anchor_points.view({1, 1, -1, 2}) - a.unsqueeze(2);           // (B, M, A, 2)
  const auto norm_ab = (ab * ab).sum(-1), norm_ad = (ad * ad).sum(-1);          // (B, M, 1)
  const auto ap_ab = ap.select(-1, 0) * ab.select(-1, 0) + ap.select(-1, 1) * ab.select(-1, 1);
  const auto ap_ad = ap.select(-1, 0) * ad.select(-1, 0) + ap.select(-1, 1) * ad.select(-1, 1);
  return ap_ab.ge(0)
      .logical_and(ap_ab.le(norm_ab))
      .logical_and(ap_ad.ge(0))
      .logical_and(ap_ad.le(norm_ad));
}

AssignerHooks rotated_assigner_hooks(const AssignerOptions& options) {
  AssignerHooks hooks;
  const double stal = stal_stride(options);
  hooks.candidates = [stal](const at::Tensor& points, const at::Tensor& gt,
                            const at::Tensor& mask) {
    return select_candidates_in_rotated_gts(points, gt, mask, stal);
  };
  hooks.box_overlap = [](const at::Tensor& gt, const at::Tensor& predicted) {
    return model::probiou(gt, predicted).clamp_min(0);
  };
  return hooks;
}

at::Tensor angle_loss(const at::Tensor& pred_angle, const at::Tensor& gt_angle,
                      const at::Tensor& gt_w, const at::Tensor& gt_h, const at::Tensor& weight,
                      const at::Tensor& target_scores_sum, double lambda) {
  const auto log_ar = at::log((gt_w + 1e-9) / (gt_h + 1e-9));
  const auto scale = at::exp(-(log_ar * log_ar) / (lambda * lambda));
  const auto delta = pred_angle - gt_angle;
  const auto wrapped = delta - at::round(delta / M_PI) * M_PI;
  return (at::sin(2 * wrapped).pow(2) * scale * weight).sum() / target_scores_sum;
}

ObbHeadLoss::ObbHeadLoss(int64_t num_classes, int64_t reg_max, std::vector<double> strides,
                         LossGains gains, double angle_gain, int64_t topk, int64_t topk2)
    : head_(num_classes, reg_max, std::move(strides), gains, topk, topk2),
      gains_(gains),
      angle_gain_(angle_gain) {}

ObbPredictions ObbHeadLoss::parse(const std::vector<at::Tensor>& levels,
                                  const std::vector<at::Tensor>& angle_levels) const {
  ObbPredictions p;
  p.head = head_.parse(levels);
  if (angle_levels.size() != levels.size()) {
    throw std::invalid_argument("OBB loss: " + std::to_string(angle_levels.size()) +
                                " angle levels for " + std::to_string(levels.size()) +
                                " box levels");
  }
  std::vector<at::Tensor> flat;
  for (const auto& l : angle_levels) flat.push_back(l.to(at::kFloat).flatten(2));
  p.pred_angle = at::cat(flat, 2).permute({0, 2, 1}).contiguous();  // (B, A, 1)
  if (p.pred_angle.size(1) != p.head.pred_scores.size(1) || p.pred_angle.size(2) != 1) {
    std::ostringstream msg;
    msg << "OBB loss: angles " << p.pred_angle.sizes() << " do not match the "
        << p.head.pred_scores.size(1) << " anchors";
    throw std::invalid_argument(msg.str());
  }
  auto ltrb = p.head.pred_dist;
  const int64_t reg_max = head_.reg_max();
  if (reg_max > 1) {
    const auto bins = at::arange(reg_max, ltrb.options());
    const auto sizes = ltrb.sizes();
    ltrb = ltrb.view({sizes[0], sizes[1], 4, reg_max}).softmax(3).matmul(bins);
  }
  p.pred_rboxes =
      at::cat({model::dist2rbox(ltrb, p.pred_angle, p.head.anchor_points), p.pred_angle}, -1);
  return p;
}

Assignment ObbHeadLoss::assign(const ObbPredictions& p, const GtTargets& gt) const {
  // Boxes in pixels for the assigner; the angle is not scaled.
  const auto scale = at::cat({p.head.stride.expand({-1, 4}), at::ones_like(p.head.stride)}, 1);
  return head_.assigner()(p.head.pred_scores.detach().sigmoid(), p.pred_rboxes.detach() * scale,
                          p.head.anchor_points * p.head.stride, gt.labels, gt.bboxes, gt.mask,
                          rotated_assigner_hooks(head_.assigner().options()), gt.static_shapes);
}

at::Tensor ObbHeadLoss::operator()(const ObbPredictions& p, const GtTargets& gt) const {
  const Assignment a = assign(p, gt);
  const auto target_scores_sum = a.target_scores.sum().clamp_min(1.0);
  const auto cls = at::binary_cross_entropy_with_logits(p.head.pred_scores, a.target_scores, {}, {},
                                                        at::Reduction::None)
                       .sum() /
                   target_scores_sum;
  // Targets in grid units (the angle unscaled).
  const auto scale = at::cat({p.head.stride.expand({-1, 4}), at::ones_like(p.head.stride)}, 1);
  const auto target = a.target_bboxes / scale;  // (B, A, 5)
  if (a.static_shapes) return masked_terms(p, a, target, cls, target_scores_sum);
  const auto fg = a.fg_mask;
  const auto weight = a.target_scores.sum(-1).index({fg});  // (N)
  const auto pred_fg = p.pred_rboxes.index({fg}), target_fg = target.index({fg});
  // With no foreground these are empty sums (0) that still join the graph.
  const auto iou = model::probiou(pred_fg, target_fg, /*floor=*/0.01);
  const auto box = ((1.0 - iou) * weight).sum() / target_scores_sum;
  const int64_t reg_max = head_.reg_max();
  at::Tensor dist;
  if (reg_max > 1) {
    const auto target_ltrb = model::rbox2dist(target, p.head.anchor_points, reg_max);
    dist = (dfl_loss(p.head.pred_dist.index({fg}).view({-1, reg_max}), target_ltrb.index({fg}),
                     reg_max)
                .squeeze(-1) *
            weight)
               .sum() /
           target_scores_sum;
  } else {
    // ltrb in pixels over the image width (l, r) or height (t, b).
    const auto size = at::tensor({p.head.image_w, p.head.image_h, p.head.image_w, p.head.image_h},
                                 p.head.stride.options().dtype(at::kDouble))
                          .to(p.head.stride.scalar_type());
    const auto target_ltrb =
        model::rbox2dist(target, p.head.anchor_points, 1) * p.head.stride / size;
    const auto pred_ltrb = p.head.pred_dist * p.head.stride / size;
    const auto l1 =
        at::l1_loss(pred_ltrb.index({fg}), target_ltrb.index({fg}), at::Reduction::None).mean(-1);
    dist = (l1 * weight).sum() / target_scores_sum;
  }
  const auto angle =
      angle_loss(pred_fg.select(-1, 4), target_fg.select(-1, 4), target_fg.select(-1, 2),
                 target_fg.select(-1, 3), weight, target_scores_sum) +
      (p.pred_angle * 0).sum();  // joins the graph when there is no foreground
  return at::stack({box * gains_.box, cls * gains_.cls, dist * gains_.dfl, angle * angle_gain_});
}

at::Tensor ObbHeadLoss::masked_terms(const ObbPredictions& p, const Assignment& a,
                                     const at::Tensor& target, const at::Tensor& cls,
                                     const at::Tensor& target_scores_sum) const {
  // Every anchor, weighted: 0 off the foreground, where both boxes are replaced by a unit box
  // (finite ProbIoU, aspect and angle terms; no gradient reaches the replaced predictions).
  const auto fg = a.fg_mask;
  const auto weight = a.target_scores.sum(-1);  // (B, A)
  const std::vector<double> unit{0, 0, 1, 1, 0};
  const auto pred = keep_where(fg, p.pred_rboxes, unit);
  const auto truth = keep_where(fg, target, unit);
  const auto iou = model::probiou(pred, truth, /*floor=*/0.01);
  const auto box = ((1.0 - iou) * weight).sum() / target_scores_sum;
  const int64_t reg_max = head_.reg_max();
  at::Tensor dist;
  if (reg_max > 1) {
    const auto target_ltrb = model::rbox2dist(truth, p.head.anchor_points, reg_max);
    dist = (dfl_loss(p.head.pred_dist.reshape({-1, reg_max}), target_ltrb.reshape({-1, 4}), reg_max)
                .squeeze(-1) *
            weight.reshape({-1}))
               .sum() /
           target_scores_sum;
  } else {
    const double w = p.head.image_w, h = p.head.image_h;
    const auto target_ltrb = ltrb_over_image_size(
        model::rbox2dist(truth, p.head.anchor_points, 1) * p.head.stride, h, w);
    const auto pred_ltrb = ltrb_over_image_size(p.head.pred_dist * p.head.stride, h, w);
    const auto l1 = at::l1_loss(pred_ltrb, target_ltrb, at::Reduction::None).mean(-1);
    dist = (l1 * weight).sum() / target_scores_sum;
  }
  const auto angle = angle_loss(pred.select(-1, 4), truth.select(-1, 4), truth.select(-1, 2),
                                truth.select(-1, 3), weight, target_scores_sum);
  return at::stack({box * gains_.box, cls * gains_.cls, dist * gains_.dfl, angle * angle_gain_});
}

std::vector<std::string> obb_loss_item_names(int64_t reg_max) {
  return {"box_loss", "cls_loss", reg_max > 1 ? "dfl_loss" : "l1_loss", "angle_loss"};
}

}  // namespace trainer::loss
