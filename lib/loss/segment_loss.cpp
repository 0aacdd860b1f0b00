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

LossResult SegmentLoss::operator()(const model::DetectOutput& outputs, const LossTargets& targets,
                                   int64_t batch_size) {
  if (outputs.one2many.empty() || outputs.one2many_coef.empty() || outputs.protos.empty()) {
    throw std::invalid_argument("segment loss: no one2many box, coefficient or proto outputs");
  }
  if (end2end() && (outputs.one2one.empty() || outputs.one2one_coef.empty())) {
    throw std::invalid_argument("segment loss: end-to-end loss needs the one2one outputs");
  }
  if (!targets.masks.defined()) {
    throw std::invalid_argument("segment loss: the batch has no masks (not a segmentation batch)");
  }
  const int64_t b = outputs.one2many.front().size(0);
  if (b != batch_size) {
    throw std::invalid_argument("segment loss: outputs hold " + std::to_string(b) +
                                " images, batch_size is " + std::to_string(batch_size));
  }
  if (targets.static_instances > 0) {
    throw std::invalid_argument(
        "segmentation loss: static shapes are not implemented for this task yet");
  }
  // fp32 maths even inside a BF16 autocast region (parse() casts the outputs).
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const auto o2m = seg_o2m_.head().parse(outputs.one2many);
  const auto device = o2m.pred_scores.device();
  const auto gt = pack_targets(targets.labels, batch_size, seg_o2m_.head().num_classes(),
                               o2m.image_h, o2m.image_w, device);
  const auto labels = targets.labels.to(device);
  MaskTargets mask_targets{targets.masks.to(device), targets.overlap_masks,
                           labels.select(1, 0).to(at::kLong), labels.select(1, 1).to(at::kLong)};
  const at::Tensor semantic = outputs.semantic.empty() ? at::Tensor() : outputs.semantic.front();
  if (end2end()) {  // both branches read these: derived once
    const auto& protos = outputs.protos.front();
    mask_targets.assigner_masks = assigner_gt_masks(mask_targets, batch_size, gt.labels.size(1),
                                                    protos.size(2), protos.size(3));
    if (semantic.defined()) {
      mask_targets.semantic_target = semantic_target_at(mask_targets, batch_size, semantic.size(1),
                                                        semantic.size(2), semantic.size(3));
    }
  }
  const auto masks_o2m =
      seg_o2m_.parse(outputs.one2many_coef, outputs.protos.front(), semantic, /*detach=*/false);
  const auto loss_o2m = seg_o2m_(o2m, masks_o2m, gt, mask_targets);
  const double scale = static_cast<double>(batch_size);
  if (!end2end()) return {loss_o2m.sum() * scale, loss_o2m.detach()};
  const auto o2o = seg_o2o_.head().parse(outputs.one2one);
  const auto masks_o2o =
      seg_o2o_.parse(outputs.one2one_coef, outputs.protos.front(), semantic, /*detach=*/true);
  const auto loss_o2o = seg_o2o_(o2o, masks_o2o, gt, mask_targets);
  const auto total =
      loss_o2m.sum() * (scale * o2m_weight()) + loss_o2o.sum() * (scale * o2o_weight());
  return {total, loss_o2o.detach()};
}

}  // namespace trainer::loss
