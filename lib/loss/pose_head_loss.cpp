// Tested by tests/loss/test_pose_loss.cpp: pose_loss_item_names; YOLO26/YOLO11 PoseLoss items,
//   gradients to keypoints/sigma/flow, zero terms without objects.
#include "loss/pose_head_loss.h"

#include <ATen/ATen.h>

#include <limits>
#include <sstream>
#include <stdexcept>

#include "loss/box_ops.h"
#include "loss/keypoint_loss.h"
#include "loss/positive_slots.h"
#include "loss/rle_loss.h"

namespace trainer::loss {

namespace {

double smallest_normal(at::ScalarType t) {
  switch (t) {
    case at::kHalf:
      return 6.103515625e-05;
    case at::kDouble:
      return std::numeric_limits<double>::min();
    default:  // fp32 and bf16 share the exponent range
      return static_cast<double>(std::numeric_limits<float>::min());
  }
}

// (B, C, A) fp32 from per-level (B, C, H, W), checking the channel count.
at::Tensor flatten_levels(const std::vector<at::Tensor>& levels, int64_t channels,
                          size_t num_levels, const char* what) {
  if (levels.size() != num_levels) {
    throw std::invalid_argument(std::string("pose loss: ") + std::to_string(levels.size()) + " " +
                                what + " levels for " + std::to_string(num_levels) + " strides");
  }
  std::vector<at::Tensor> flat;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].dim() != 4 || levels[i].size(1) != channels) {
      std::ostringstream msg;
      msg << "pose loss: " << what << " level " << i << " is " << levels[i].sizes()
          << ", expected (B, " << channels << ", H, W)";
      throw std::invalid_argument(msg.str());
    }
    flat.push_back(levels[i].to(at::kFloat).flatten(2));
  }
  return at::cat(flat, 2);
}

}  // namespace

const at::Tensor& PoseHeadLoss::device_values(DeviceValues& cache,
                                              const std::vector<double>& values,
                                              const at::TensorOptions& options) const {
  if (!cache.tensor.defined() || cache.tensor.device() != options.device()) {
    cache.tensor = at::tensor(values, options.dtype(at::kDouble)).to(at::kFloat);
  }
  return cache.tensor;
}

std::array<at::Tensor, 3> PoseHeadLoss::static_keypoint_terms(const HeadPredictions& p,
                                                              const KeypointPredictions& kp,
                                                              const Assignment& a,
                                                              const at::Tensor& gt_kpts) const {
  // The positives in a fixed number of slots per image; fillers have weight 0 and masks false.
  const auto& options = head_.assigner().options();
  const int64_t na = a.fg_mask.size(1), m = gt_kpts.size(1);
  const auto slots =
      positive_slots(a.fg_mask, positive_capacity(na, m, options.topk, options.topk2));
  const auto filled = slots.weight.gt(0);                              // (B, P)
  const auto slot_stride = p.stride.view({-1}).index({slots.anchor});  // (B, P)
  const auto gt_row = a.target_gt_idx.gather(1, slots.anchor);         // (B, P)
  auto gt_kpt = gather_slots(gt_kpts, gt_row);
  gt_kpt = at::cat(
      {gt_kpt.narrow(-1, 0, 2) / slot_stride.unsqueeze(-1).unsqueeze(-1), gt_kpt.narrow(-1, 2, 1)},
      -1);  // (B, P, K, 3)
  const auto box = gather_slots(a.target_bboxes, slots.anchor) / slot_stride.unsqueeze(-1);
  const auto area =
      at::where(filled.unsqueeze(-1), xyxy_to_xywh(box).narrow(-1, 2, 2).prod(-1, /*keepdim=*/true),
                at::ones({}, box.options()));                 // (B, P, 1)
  const auto pred_kpt = gather_slots(kp.kpts, slots.anchor);  // (B, P, K, ndim)
  const auto visible = gt_kpt.select(-1, 2).ne(0);            // (B, P, K)
  const auto mask = visible.logical_and(filled.unsqueeze(-1));
  const auto& sigmas = device_values(sigmas_cache_, config_.sigmas, box.options());
  std::array<at::Tensor, 3> terms;
  terms[0] = masked_keypoint_location_loss(pred_kpt, gt_kpt, mask, area, sigmas, slots.positives);
  if (config_.keypoint_dim == 3) {
    terms[1] = masked_keypoint_objectness_loss(pred_kpt.select(-1, 2), visible, slots.weight,
                                               slots.positives);
  }
  if (yolo26() && kp.sigma.defined()) {
    const auto& weights = device_values(rle_weights_cache_, config_.rle_weights, box.options());
    terms[2] = masked_rle_loss(pred_kpt, gather_slots(kp.sigma, slots.anchor), gt_kpt, mask,
                               weights, *config_.flow, kp.sigma_tiny);
  }
  return terms;
}

std::vector<std::string> pose_loss_item_names(int64_t reg_max, bool yolo26) {
  std::vector<std::string> names = {"box_loss", "pose_loss", "kobj_loss", "cls_loss",
                                    reg_max > 1 ? "dfl_loss" : "l1_loss"};
  if (yolo26) names.emplace_back("rle_loss");
  return names;
}

PoseHeadLoss::PoseHeadLoss(HeadLoss head, PoseHeadConfig config)
    : head_(std::move(head)), config_(std::move(config)) {
  const auto k = config_.num_keypoints;
  if (k < 1 || (config_.keypoint_dim != 2 && config_.keypoint_dim != 3))
    throw std::invalid_argument("pose loss: keypoint shape must be [K >= 1, 2 or 3]");
  if (static_cast<int64_t>(config_.sigmas.size()) != k)
    throw std::invalid_argument("pose loss: " + std::to_string(config_.sigmas.size()) +
                                " sigmas for " + std::to_string(k) + " keypoints");
  if (yolo26()) {
    if (static_cast<int64_t>(config_.rle_weights.size()) != k)
      throw std::invalid_argument("pose loss: RLE weights must have one value per keypoint");
    if (!config_.flow->log_prob) throw std::invalid_argument("pose loss: the flow has no log_prob");
    pose_assigner_.emplace(head_.assigner().options(), config_.sigmas);
  }
}

KeypointPredictions PoseHeadLoss::parse(const std::vector<at::Tensor>& kpts,
                                        const std::vector<at::Tensor>& sigma,
                                        const HeadPredictions& pred) const {
  const int64_t k = config_.num_keypoints, nd = config_.keypoint_dim;
  const size_t nl = head_.strides().size();
  const auto flat = flatten_levels(kpts, k * nd, nl, "keypoint");  // (B, K * ndim, A)
  const int64_t b = flat.size(0), a = flat.size(2);
  if (b != pred.pred_scores.size(0) || a != pred.anchor_points.size(0))
    throw std::invalid_argument("pose loss: keypoint outputs do not match the box outputs' grid");
  const auto raw = flat.permute({0, 2, 1}).reshape({b, a, k, nd});
  const auto anchors = pred.anchor_points.view({1, a, 1, 2});
  const auto xy = raw.narrow(-1, 0, 2);
  const auto decoded_xy = yolo26() ? xy + anchors : xy * 2.0 + (anchors - 0.5);
  KeypointPredictions out;
  out.kpts = nd == 2 ? decoded_xy : at::cat({decoded_xy, raw.narrow(-1, 2, nd - 2)}, -1);
  if (yolo26() && !sigma.empty()) {
    out.sigma_tiny = smallest_normal(sigma.front().scalar_type());
    out.sigma = flatten_levels(sigma, 2 * k, nl, "sigma").permute({0, 2, 1}).reshape({b, a, k, 2});
  }
  return out;
}

at::Tensor PoseHeadLoss::operator()(const HeadPredictions& p, const KeypointPredictions& kp,
                                    const GtTargets& gt, const at::Tensor& gt_kpts) const {
  const auto stride = p.stride;  // (A, 1)
  const Assignment a =
      yolo26()
          ? (*pose_assigner_)(p.pred_scores.detach().sigmoid(), p.pred_bboxes.detach() * stride,
                              p.anchor_points * stride, gt.labels, gt.bboxes, gt.mask,
                              kp.kpts.detach().narrow(-1, 0, 2) * stride.unsqueeze(-1), gt_kpts,
                              stride.view({-1}), gt.static_shapes)
          : head_.assign(p, gt);
  const auto det = head_.box_cls_dfl(p, a);  // [box, cls, dfl]
  const auto zero = at::zeros({}, det.options());
  at::Tensor pose = zero, kobj = zero, rle = zero;
  if (a.static_shapes) {
    const auto terms = static_keypoint_terms(p, kp, a, gt_kpts);
    pose = terms[0];
    if (config_.keypoint_dim == 3) kobj = terms[1];
    if (yolo26() && kp.sigma.defined()) rle = terms[2];
  } else if (a.fg_mask.any().item<bool>()) {
    const auto fg = a.fg_mask;
    const auto image = fg.nonzero().select(1, 0);
    const auto pos_stride = stride.view({1, -1}).expand(fg.sizes()).index({fg});  // (N)
    auto gt_kpt = gt_kpts.index({image, a.target_gt_idx.index({fg})});            // (N, K, 3)
    gt_kpt = at::cat(
        {gt_kpt.narrow(-1, 0, 2) / pos_stride.view({-1, 1, 1}), gt_kpt.narrow(-1, 2, 1)}, -1);
    const auto box = a.target_bboxes.index({fg}) / pos_stride.view({-1, 1});  // (N, 4) grid units
    const auto area = xyxy_to_xywh(box).narrow(-1, 2, 2).prod(-1, /*keepdim=*/true);
    const auto pred_kpt = kp.kpts.index({fg});  // (N, K, ndim)
    const auto mask = gt_kpt.select(-1, 2).ne(0);
    const auto sigmas = at::tensor(config_.sigmas, det.options().dtype(at::kDouble)).to(at::kFloat);
    pose = keypoint_location_loss(pred_kpt, gt_kpt, mask, area, sigmas);
    if (config_.keypoint_dim == 3) kobj = keypoint_objectness_loss(pred_kpt.select(-1, 2), mask);
    if (yolo26() && kp.sigma.defined()) {
      const auto weights =
          at::tensor(config_.rle_weights, det.options().dtype(at::kDouble)).to(at::kFloat);
      rle = rle_loss(pred_kpt, kp.sigma.index({fg}), gt_kpt, mask, weights, *config_.flow,
                     kp.sigma_tiny);
    }
  } else {
    // Zeros that keep the keypoint outputs (and the flow) in the graph.
    pose = kp.kpts.narrow(-1, 0, 0).sum();
    if (yolo26()) rle = rle_zero(kp.kpts, *config_.flow);
  }
  const auto& g = config_.gains;
  std::vector<at::Tensor> items = {det[0], pose * g.pose, kobj * g.kobj, det[1], det[2]};
  if (yolo26()) items.push_back(rle * g.rle);
  return at::stack(items);
}

}  // namespace trainer::loss
