#include "loss/pose_loss.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <stdexcept>

#include "loss/keypoint_sigmas.h"
#include "loss/keypoint_targets.h"

namespace trainer::loss {

namespace {

PoseHeadConfig head_config(PoseGains gains, int64_t k, int64_t ndim,
                           const std::vector<double>& sigmas, std::optional<KeypointFlow> flow) {
  PoseHeadConfig c;
  c.num_keypoints = k;
  c.keypoint_dim = ndim;
  c.sigmas = default_keypoint_sigmas(k, ndim, sigmas);
  c.rle_weights = rle_keypoint_weights(k, ndim);
  c.gains = gains;
  c.flow = std::move(flow);
  return c;
}

}  // namespace

PoseLoss::PoseLoss(int num_classes, int reg_max, std::vector<double> strides, LossGains gains,
                   PoseGains pose_gains, bool end2end, int64_t num_keypoints, int64_t keypoint_dim,
                   std::vector<double> sigmas, std::optional<KeypointFlow> flow)
    : YoloLoss(num_classes, reg_max, strides, gains, end2end),
      pose_o2m_(HeadLoss(num_classes, reg_max, strides, gains, /*topk=*/10),
                head_config(pose_gains, num_keypoints, keypoint_dim, sigmas, flow)),
      pose_o2o_(HeadLoss(num_classes, reg_max, strides, gains, /*topk=*/7, /*topk2=*/1),
                head_config(pose_gains, num_keypoints, keypoint_dim, sigmas, flow)) {}

std::vector<std::string> PoseLoss::item_names() const {
  return pose_loss_item_names(pose_o2m_.head().reg_max(), pose_o2m_.yolo26());
}

LossResult PoseLoss::operator()(const model::DetectOutput& outputs, const LossTargets& targets,
                                int64_t batch_size) {
  if (end2end() && (outputs.one2one.empty() || outputs.one2one_kpts.empty()))
    throw std::invalid_argument("pose loss: end-to-end loss needs the one2one outputs");
  if (outputs.one2many.empty() || outputs.one2many_kpts.empty())
    throw std::invalid_argument("pose loss: no one2many box or keypoint outputs");
  if (!targets.keypoints.defined())
    throw std::invalid_argument("pose loss: the targets have no keypoints");
  const int64_t b = outputs.one2many.front().size(0);
  if (b != batch_size) {
    throw std::invalid_argument("pose loss: outputs hold " + std::to_string(b) +
                                " images, batch_size is " + std::to_string(batch_size));
  }
  if (targets.static_instances > 0) {
    throw std::invalid_argument("pose loss: static shapes are not implemented for this task yet");
  }
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);

  const auto o2m = pose_o2m_.head().parse(outputs.one2many);
  const auto device = o2m.pred_scores.device();
  const auto gt = pack_targets(targets.labels, batch_size, pose_o2m_.head().num_classes(),
                               o2m.image_h, o2m.image_w, device);
  const auto gt_kpts = pack_keypoints(targets.labels, targets.keypoints, batch_size, o2m.image_h,
                                      o2m.image_w, device);
  const auto kp_o2m = pose_o2m_.parse(outputs.one2many_kpts, outputs.one2many_sigma, o2m);
  const auto loss_o2m = pose_o2m_(o2m, kp_o2m, gt, gt_kpts);
  const double scale = static_cast<double>(batch_size);
  if (!end2end()) return {loss_o2m.sum() * scale, loss_o2m.detach()};

  const auto o2o = pose_o2o_.head().parse(outputs.one2one);
  const auto kp_o2o = pose_o2o_.parse(outputs.one2one_kpts, outputs.one2one_sigma, o2o);
  const auto loss_o2o = pose_o2o_(o2o, kp_o2o, gt, gt_kpts);
  const auto total =
      loss_o2m.sum() * (scale * o2m_weight()) + loss_o2o.sum() * (scale * o2o_weight());
  return {total, loss_o2o.detach()};
}

}  // namespace trainer::loss
