#include "loss/yolo_loss.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <stdexcept>
#include <string>

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

std::pair<double, double> YoloLoss::check_outputs(const model::DetectOutput& outputs,
                                                  int64_t batch_size, const char* task,
                                                  bool needs_angle) const {
  const std::string name = task;
  if (end2end_ && (outputs.one2one.empty() || (needs_angle && outputs.one2one_angle.empty())))
    throw std::invalid_argument(name + " loss: end-to-end loss needs the one2one outputs");
  if (outputs.one2many.empty() || (needs_angle && outputs.one2many_angle.empty()))
    throw std::invalid_argument(name + " loss: no one2many outputs");
  const auto& level0 = outputs.one2many.front();
  if (level0.dim() != 4 || level0.size(0) != batch_size) {
    throw std::invalid_argument(name + " loss: outputs hold " +
                                std::to_string(level0.dim() > 0 ? level0.size(0) : 0) +
                                " images, batch_size is " + std::to_string(batch_size));
  }
  const double stride = one2many_.strides().front();
  return {static_cast<double>(level0.size(2)) * stride,
          static_cast<double>(level0.size(3)) * stride};
}

LossResult YoloLoss::operator()(const model::DetectOutput& outputs, const LossTargets& targets,
                                int64_t batch_size) {
  const auto [image_h, image_w] = check_outputs(outputs, batch_size, "detection");
  const auto gt = prepare(targets, batch_size, image_h, image_w, outputs.one2many.front().device());
  return compute(outputs, gt, batch_size);
}

GtTargets YoloLoss::prepare(const LossTargets& targets, int64_t batch_size, double image_h,
                            double image_w, at::Device device) const {
  return pack_targets(targets.labels, batch_size, one2many_.num_classes(), image_h, image_w, device,
                      targets.static_instances);
}

LossResult YoloLoss::compute(const model::DetectOutput& outputs, const GtTargets& gt,
                             int64_t batch_size) {
  (void)check_outputs(outputs, batch_size, "detection");
  // fp32 maths even when called inside a BF16 autocast region (the inputs are cast in parse()).
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const auto loss_o2m = one2many_(one2many_.parse(outputs.one2many), gt);
  if (!end2end_) {
    return {weighted_total(loss_o2m, {}, batch_size, gt.static_shapes), loss_o2m.detach()};
  }
  const auto loss_o2o = one2one_(one2one_.parse(outputs.one2one), gt);
  return {weighted_total(loss_o2m, loss_o2o, batch_size, gt.static_shapes), loss_o2o.detach()};
}

at::Tensor YoloLoss::weighted_total(const at::Tensor& loss_o2m, const at::Tensor& loss_o2o,
                                    int64_t batch_size, bool static_shapes) const {
  const double scale = static_cast<double>(batch_size);
  if (!end2end_) return loss_o2m.sum() * scale;
  if (!static_shapes) {
    return loss_o2m.sum() * (scale * o2m_weight_) + loss_o2o.sum() * (scale * o2o_weight_);
  }
  if (!weight_tensor_.defined() || weight_tensor_.device() != loss_o2m.device()) {
    weight_tensor_ = at::empty({2}, loss_o2m.options().dtype(at::kFloat));
    weight_tensor_.select(0, 0).fill_(o2m_weight_);
    weight_tensor_.select(0, 1).fill_(o2o_weight_);
  }
  return (loss_o2m.sum() * weight_tensor_.select(0, 0) +
          loss_o2o.sum() * weight_tensor_.select(0, 1)) *
         scale;
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
  if (weight_tensor_.defined()) {
    weight_tensor_.select(0, 0).fill_(o2m_weight_);
    weight_tensor_.select(0, 1).fill_(o2o_weight_);
  }
}

}  // namespace trainer::loss
