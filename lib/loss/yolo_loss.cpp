#include "loss/yolo_loss.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <stdexcept>

namespace trainer::loss {

namespace {
constexpr double kO2mStart = 0.8;
constexpr double kO2mFinal = 0.1;
}  // namespace

double prog_loss_o2m_weight(int64_t updates, int total_epochs) {
  const double span = std::max(total_epochs - 1, 1);
  return std::max(1.0 - static_cast<double>(updates) / span, 0.0) * (kO2mStart - kO2mFinal) +
         kO2mFinal;
}

YoloLoss::YoloLoss(int num_classes, int reg_max, std::vector<double> strides, LossGains gains,
                   bool end2end)
    : one2many_(num_classes, reg_max, strides, gains, /*topk=*/10),
      one2one_(num_classes, reg_max, strides, gains, /*topk=*/7, /*topk2=*/1),
      end2end_(end2end),
      o2m_weight_(end2end ? kO2mStart : 1.0),
      o2o_weight_(end2end ? 1.0 - kO2mStart : 0.0) {}

LossResult YoloLoss::operator()(const model::DetectOutput& outputs, const LossTargets& targets,
                                int64_t batch_size) {
  const auto& labels = targets.labels;
  if (end2end_ && outputs.one2one.empty())
    throw std::invalid_argument("detection loss: end-to-end loss needs the one2one outputs");
  if (outputs.one2many.empty()) throw std::invalid_argument("detection loss: no one2many outputs");
  const int64_t b = outputs.one2many.front().size(0);
  if (b != batch_size) {
    throw std::invalid_argument("detection loss: outputs hold " + std::to_string(b) +
                                " images, batch_size is " + std::to_string(batch_size));
  }
  // fp32 maths even when called inside a BF16 autocast region (the inputs are cast in parse()).
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);

  const auto o2m = one2many_.parse(outputs.one2many);
  const auto gt = pack_targets(labels, batch_size, one2many_.num_classes(), o2m.image_h,
                               o2m.image_w, o2m.pred_scores.device());
  const auto loss_o2m = one2many_(o2m, gt);
  const double scale = static_cast<double>(batch_size);
  if (!end2end_) return {loss_o2m.sum() * scale, loss_o2m.detach()};

  const auto o2o = one2one_.parse(outputs.one2one);
  const auto loss_o2o = one2one_(o2o, gt);
  const auto total =
      loss_o2m.sum() * (scale * o2m_weight_) + loss_o2o.sum() * (scale * o2o_weight_);
  return {total, loss_o2o.detach()};
}

void YoloLoss::end_epoch(int total_epochs) {
  if (!end2end_) return;
  set_epoch_updates(updates_ + 1, total_epochs);
}

void YoloLoss::set_epoch_updates(int64_t updates, int total_epochs) {
  updates_ = updates;
  if (!end2end_) return;
  o2m_weight_ = prog_loss_o2m_weight(updates_, total_epochs);
  o2o_weight_ = std::max(1.0 - o2m_weight_, 0.0);
}

}  // namespace trainer::loss
