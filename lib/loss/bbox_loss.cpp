#include "loss/bbox_loss.h"

#include <ATen/ATen.h>

#include "loss/anchors.h"
#include "loss/box_ops.h"

namespace trainer::loss {

namespace {
double dfl_max(int64_t reg_max) {
  return static_cast<double>(reg_max) - 1 - 0.01;
}
}  // namespace

DflTargets dfl_targets(const at::Tensor& target, int64_t reg_max) {
  const auto t = target.clamp(0, dfl_max(reg_max));
  const auto lower = t.to(at::kLong);  // t >= 0, so truncation is floor
  const auto lower_weight = (lower + 1).to(t.scalar_type()) - t;
  return {lower, lower_weight, 1 - lower_weight};
}

at::Tensor dfl_loss(const at::Tensor& pred_dist, const at::Tensor& target, int64_t reg_max) {
  const auto tg = dfl_targets(target, reg_max);
  const auto ce = [&](const at::Tensor& bins) {
    return at::cross_entropy_loss(pred_dist, bins.reshape({-1}), {}, at::Reduction::None)
        .view(tg.lower.sizes());
  };
  return (ce(tg.lower) * tg.lower_weight + ce(tg.lower + 1) * tg.upper_weight)
      .mean(-1, /*keepdim=*/true);
}

BoxLossTerms bbox_loss(const at::Tensor& pred_dist, const at::Tensor& pred_bboxes,
                       const at::Tensor& anchor_points, const at::Tensor& target_bboxes,
                       const at::Tensor& target_scores, const at::Tensor& target_scores_sum,
                       const at::Tensor& fg_mask, const at::Tensor& stride, double image_h,
                       double image_w, int64_t reg_max) {
  const auto weight = target_scores.sum(-1).index({fg_mask}).unsqueeze(-1);  // (N, 1)
  const auto iou =
      bbox_iou(pred_bboxes.index({fg_mask}), target_bboxes.index({fg_mask}), IouKind::kCiou);
  BoxLossTerms out;
  out.iou = ((1.0 - iou) * weight).sum() / target_scores_sum;

  if (reg_max > 1) {
    const auto target_ltrb = bbox_to_dist(anchor_points, target_bboxes, dfl_max(reg_max));
    const auto loss = dfl_loss(pred_dist.index({fg_mask}).view({-1, reg_max}),
                               target_ltrb.index({fg_mask}), reg_max) *
                      weight;
    out.dfl = loss.sum() / target_scores_sum;
  } else {
    // ltrb in pixels over the image width (l, r) or height (t, b). Made on the host and copied
    // without blocking: at::tensor with device options fills on the host and copies with a sync.
    const auto size = at::tensor({image_w, image_h, image_w, image_h}, at::kDouble)
                          .to(stride.scalar_type())
                          .to(stride.device(), /*non_blocking=*/true);
    const auto target_ltrb = bbox_to_dist(anchor_points, target_bboxes) * stride / size;
    const auto pred_ltrb = pred_dist * stride / size;
    const auto l1 =
        at::l1_loss(pred_ltrb.index({fg_mask}), target_ltrb.index({fg_mask}), at::Reduction::None)
            .mean(-1, /*keepdim=*/true);
    out.dfl = (l1 * weight).sum() / target_scores_sum;
  }
  return out;
}

at::Tensor ltrb_over_image_size(const at::Tensor& ltrb, double image_h, double image_w) {
  return at::stack({ltrb.select(-1, 0) / image_w, ltrb.select(-1, 1) / image_h,
                    ltrb.select(-1, 2) / image_w, ltrb.select(-1, 3) / image_h},
                   -1);
}

at::Tensor keep_where(const at::Tensor& mask, const at::Tensor& boxes,
                      const std::vector<double>& fill) {
  std::vector<at::Tensor> values;
  values.reserve(fill.size());
  for (const double v : fill) values.push_back(at::full({1}, v, boxes.options()));
  return at::where(mask.unsqueeze(-1), boxes, at::cat(values));
}

BoxLossTerms masked_bbox_loss(const at::Tensor& pred_dist, const at::Tensor& pred_bboxes,
                              const at::Tensor& anchor_points, const at::Tensor& target_bboxes,
                              const at::Tensor& target_scores, const at::Tensor& target_scores_sum,
                              const at::Tensor& fg_mask, const at::Tensor& stride, double image_h,
                              double image_w, int64_t reg_max) {
  // target_scores are one-hot x alignment x foreground, so the weight is 0 off the foreground.
  const auto weight = target_scores.sum(-1, /*keepdim=*/true);  // (B, A, 1)
  const std::vector<double> unit{0, 0, 1, 1};
  const auto iou = bbox_iou(keep_where(fg_mask, pred_bboxes, unit),
                            keep_where(fg_mask, target_bboxes, unit), IouKind::kCiou);
  BoxLossTerms out;
  out.iou = ((1.0 - iou) * weight).sum() / target_scores_sum;

  if (reg_max > 1) {
    const auto target_ltrb = bbox_to_dist(anchor_points, target_bboxes, dfl_max(reg_max));
    const auto loss =
        dfl_loss(pred_dist.reshape({-1, reg_max}), target_ltrb.reshape({-1, 4}), reg_max) *
        weight.reshape({-1, 1});
    out.dfl = loss.sum() / target_scores_sum;
  } else {
    const auto target_ltrb =
        ltrb_over_image_size(bbox_to_dist(anchor_points, target_bboxes) * stride, image_h, image_w);
    const auto pred_ltrb = ltrb_over_image_size(pred_dist * stride, image_h, image_w);
    const auto l1 =
        at::l1_loss(pred_ltrb, target_ltrb, at::Reduction::None).mean(-1, /*keepdim=*/true);
    out.dfl = (l1 * weight).sum() / target_scores_sum;
  }
  return out;
}

}  // namespace trainer::loss
