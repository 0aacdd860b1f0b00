// The segmentation objective; see segment_loss.h.
#include "loss/segment_loss.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <stdexcept>
#include <string>

namespace trainer::loss {

SegmentLoss::SegmentLoss(int num_classes, int reg_max, std::vector<double> strides, LossGains gains,
                         bool end2end)
    : YoloLoss(num_classes, reg_max, strides, gains, end2end),
      seg_o2m_(HeadLoss(num_classes, reg_max, strides, gains, /*topk=*/10), end2end, gains.box),
      seg_o2o_(HeadLoss(num_classes, reg_max, strides, gains, /*topk=*/7, /*topk2=*/1), end2end,
               gains.box) {}

std::vector<std::string> SegmentLoss::item_names() const {
  return segment_loss_item_names(seg_o2m_.head().reg_max());
}

std::pair<double, double> SegmentLoss::check_segment_outputs(const model::DetectOutput& outputs,
                                                             int64_t batch_size) const {
  if (outputs.one2many.empty() || outputs.one2many_coef.empty() || outputs.protos.empty()) {
    throw std::invalid_argument("segment loss: no one2many box, coefficient or proto outputs");
  }
  if (end2end() && (outputs.one2one.empty() || outputs.one2one_coef.empty())) {
    throw std::invalid_argument("segment loss: end-to-end loss needs the one2one outputs");
  }
  return check_outputs(outputs, batch_size, "segment");
}

LossResult SegmentLoss::operator()(const model::DetectOutput& outputs, const LossTargets& targets,
                                   int64_t batch_size) {
  const auto [image_h, image_w] = check_segment_outputs(outputs, batch_size);
  const auto gt = prepare(targets, batch_size, image_h, image_w, outputs.one2many.front().device());
  return compute(outputs, gt, batch_size);
}

GtTargets SegmentLoss::prepare(const LossTargets& targets, int64_t batch_size, double image_h,
                               double image_w, at::Device device) const {
  if (!targets.masks.defined()) {
    throw std::invalid_argument("segment loss: the batch has no masks (not a segmentation batch)");
  }
  auto gt = pack_targets(targets.labels, batch_size, seg_o2m_.head().num_classes(), image_h,
                         image_w, device, targets.static_instances);
  gt.overlap_masks = targets.overlap_masks;
  const bool pad = targets.static_instances > 0 && !targets.overlap_masks;
  gt.masks = (pad ? pack_rows(targets.labels, targets.masks, batch_size, targets.static_instances)
                  : targets.masks)
                 .to(device, /*non_blocking=*/true);
  gt.label_rows = targets.labels.to(device);
  return gt;
}

LossResult SegmentLoss::compute(const model::DetectOutput& outputs, const GtTargets& gt,
                                int64_t batch_size) {
  (void)check_segment_outputs(outputs, batch_size);
  if (!gt.masks.defined()) throw std::invalid_argument("segment loss: the targets have no masks");
  // fp32 maths even inside a BF16 autocast region (parse() casts the outputs).
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const auto o2m = seg_o2m_.head().parse(outputs.one2many);
  MaskTargets mask_targets;
  mask_targets.masks = gt.masks;
  mask_targets.overlap = gt.overlap_masks;
  mask_targets.padded = gt.static_shapes && !gt.overlap_masks;
  if (!gt.static_shapes) {
    mask_targets.batch_idx = gt.label_rows.select(1, 0).to(at::kLong);
    mask_targets.classes = gt.label_rows.select(1, 1).to(at::kLong);
  }
  const at::Tensor semantic = outputs.semantic.empty() ? at::Tensor() : outputs.semantic.front();
  if (end2end()) {  // both branches read these: derived once
    const auto& protos = outputs.protos.front();
    mask_targets.assigner_masks = assigner_gt_masks(mask_targets, batch_size, gt.labels.size(1),
                                                    protos.size(2), protos.size(3));
    if (semantic.defined()) {
      mask_targets.semantic_target =
          gt.static_shapes
              ? static_semantic_target_at(gt.masks, gt.overlap_masks, gt.labels, semantic.size(1),
                                          semantic.size(2), semantic.size(3))
              : semantic_target_at(mask_targets, batch_size, semantic.size(1), semantic.size(2),
                                   semantic.size(3));
    }
  }
  const auto masks_o2m =
      seg_o2m_.parse(outputs.one2many_coef, outputs.protos.front(), semantic, /*detach=*/false);
  const auto loss_o2m = seg_o2m_(o2m, masks_o2m, gt, mask_targets);
  if (!end2end()) {
    return {weighted_total(loss_o2m, {}, batch_size, gt.static_shapes), loss_o2m.detach()};
  }
  const auto o2o = seg_o2o_.head().parse(outputs.one2one);
  const auto masks_o2o =
      seg_o2o_.parse(outputs.one2one_coef, outputs.protos.front(), semantic, /*detach=*/true);
  const auto loss_o2o = seg_o2o_(o2o, masks_o2o, gt, mask_targets);
  return {weighted_total(loss_o2m, loss_o2o, batch_size, gt.static_shapes), loss_o2o.detach()};
}

}  // namespace trainer::loss
