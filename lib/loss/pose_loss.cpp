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

std::pair<double, double> PoseLoss::check_pose_outputs(const model::DetectOutput& outputs,
                                                       int64_t batch_size) const {
  if (end2end() && (outputs.one2one.empty() || outputs.one2one_kpts.empty()))
    throw std::invalid_argument("pose loss: end-to-end loss needs the one2one outputs");
  if (outputs.one2many.empty() || outputs.one2many_kpts.empty())
    throw std::invalid_argument("pose loss: no one2many box or keypoint outputs");
  return check_outputs(outputs, batch_size, "pose");
}

LossResult PoseLoss::operator()(const model::DetectOutput& outputs, const LossTargets& targets,
                                int64_t batch_size) {
  const auto [image_h, image_w] = check_pose_outputs(outputs, batch_size);
  const auto gt = prepare(targets, batch_size, image_h, image_w, outputs.one2many.front().device());
  return compute(outputs, gt, batch_size);
}

GtTargets PoseLoss::prepare(const LossTargets& targets, int64_t batch_size, double image_h,
                            double image_w, at::Device device) const {
  if (!targets.keypoints.defined())
    throw std::invalid_argument("pose loss: the targets have no keypoints");
  auto gt = pack_targets(targets.labels, batch_size, pose_o2m_.head().num_classes(), image_h,
                         image_w, device, targets.static_instances);
  gt.keypoints = pack_keypoints(targets.labels, targets.keypoints, batch_size, image_h, image_w,
                                device, targets.static_instances);
  return gt;
}

LossResult PoseLoss::compute(const model::DetectOutput& outputs, const GtTargets& gt,
                             int64_t batch_size) {
  (void)check_pose_outputs(outputs, batch_size);
  if (!gt.keypoints.defined())
    throw std::invalid_argument("pose loss: the packed targets have no keypoints");
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);

  const auto o2m = pose_o2m_.head().parse(outputs.one2many);
  const auto kp_o2m = pose_o2m_.parse(outputs.one2many_kpts, outputs.one2many_sigma, o2m);
  const auto loss_o2m = pose_o2m_(o2m, kp_o2m, gt, gt.keypoints);
  if (!end2end()) {
    return {weighted_total(loss_o2m, {}, batch_size, gt.static_shapes), loss_o2m.detach()};
  }
  const auto o2o = pose_o2o_.head().parse(outputs.one2one);
  const auto kp_o2o = pose_o2o_.parse(outputs.one2one_kpts, outputs.one2one_sigma, o2o);
  const auto loss_o2o = pose_o2o_(o2o, kp_o2o, gt, gt.keypoints);
  return {weighted_total(loss_o2m, loss_o2o, batch_size, gt.static_shapes), loss_o2o.detach()};
}

}  // namespace trainer::loss
