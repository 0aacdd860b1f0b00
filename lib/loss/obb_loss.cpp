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
  if (end2end() && (outputs.one2one.empty() || outputs.one2one_angle.empty()))
    throw std::invalid_argument("OBB loss: end-to-end loss needs the one2one outputs");
  if (outputs.one2many.empty() || outputs.one2many_angle.empty())
    throw std::invalid_argument("OBB loss: no one2many box or angle outputs");
  const int64_t b = outputs.one2many.front().size(0);
  if (b != batch_size) {
    throw std::invalid_argument("OBB loss: outputs hold " + std::to_string(b) +
                                " images, batch_size is " + std::to_string(batch_size));
  }
  // fp32 maths even inside a BF16 autocast region (parse() casts the outputs).
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const auto o2m = obb_o2m_.parse(outputs.one2many, outputs.one2many_angle);
  const auto gt = pack_rotated_targets(targets.labels, targets.rboxes, batch_size,
                                       obb_o2m_.head().num_classes(), o2m.head.image_h,
                                       o2m.head.image_w, o2m.head.pred_scores.device());
  const auto loss_o2m = obb_o2m_(o2m, gt);
  const double scale = static_cast<double>(batch_size);
  if (!end2end()) return {loss_o2m.sum() * scale, loss_o2m.detach()};
  const auto o2o = obb_o2o_.parse(outputs.one2one, outputs.one2one_angle);
  const auto loss_o2o = obb_o2o_(o2o, gt);
  const auto total =
      loss_o2m.sum() * (scale * o2m_weight()) + loss_o2o.sum() * (scale * o2o_weight());
  return {total, loss_o2o.detach()};
}

}  // namespace trainer::loss
