// The OBB objective; see obb_loss.h.
#include "loss/obb_loss.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <stdexcept>

namespace trainer::loss {

ObbLoss::ObbLoss(int num_classes, int reg_max, std::vector<double> strides, LossGains gains,
                 double angle_gain, bool end2end)
    : YoloLoss(num_classes, reg_max, strides, gains, end2end),
      obb_o2m_(num_classes, reg_max, strides, gains, angle_gain, /*topk=*/10),
      obb_o2o_(num_classes, reg_max, strides, gains, angle_gain, /*topk=*/7, /*topk2=*/1) {}

std::vector<std::string> ObbLoss::item_names() const {
  return obb_loss_item_names(obb_o2m_.head().reg_max());
}

LossResult ObbLoss::operator()(const model::DetectOutput& outputs, const LossTargets& targets,
                               int64_t batch_size) {
  const auto [image_h, image_w] = check_outputs(outputs, batch_size, "OBB", /*needs_angle=*/true);
  const auto gt = prepare(targets, batch_size, image_h, image_w, outputs.one2many.front().device());
  return compute(outputs, gt, batch_size);
}

GtTargets ObbLoss::prepare(const LossTargets& targets, int64_t batch_size, double image_h,
                           double image_w, at::Device device) const {
  return pack_rotated_targets(targets.labels, targets.rboxes, batch_size,
                              obb_o2m_.head().num_classes(), image_h, image_w, device,
                              targets.static_instances);
}

LossResult ObbLoss::compute(const model::DetectOutput& outputs, const GtTargets& gt,
                            int64_t batch_size) {
  (void)check_outputs(outputs, batch_size, "OBB", /*needs_angle=*/true);
  // fp32 maths even inside a BF16 autocast region (parse() casts the outputs).
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const auto loss_o2m = obb_o2m_(obb_o2m_.parse(outputs.one2many, outputs.one2many_angle), gt);
  if (!end2end()) {
    return {weighted_total(loss_o2m, {}, batch_size, gt.static_shapes), loss_o2m.detach()};
  }
  const auto loss_o2o = obb_o2o_(obb_o2o_.parse(outputs.one2one, outputs.one2one_angle), gt);
  return {weighted_total(loss_o2m, loss_o2o, batch_size, gt.static_shapes), loss_o2o.detach()};
}

}  // namespace trainer::loss
