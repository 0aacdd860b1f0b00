#include "loss/pose_assigner.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace trainer::loss {

at::Tensor keypoint_oks(const at::Tensor& pd_kpts, const at::Tensor& gt_kpts,
                        const at::Tensor& area, const at::Tensor& sigmas, double eps) {
  const auto vis = gt_kpts.select(-1, 2).gt(0);                                       // (P, K)
  const auto d = (pd_kpts.to(at::kFloat) - gt_kpts.narrow(-1, 0, 2)).pow(2).sum(-1);  // (P, K)
  const auto e = (-d / ((2 * sigmas).pow(2) * (area + eps) * 2)).exp();
  return (e * vis).sum(-1) / vis.sum(-1).clamp_min(1);
}

at::Tensor gate_candidates_by_level(const at::Tensor& candidates, const at::Tensor& gt_bboxes,
                                    const at::Tensor& anchor_strides, double lo, double hi) {
  const auto wh = gt_bboxes.narrow(-1, 2, 2) - gt_bboxes.narrow(-1, 0, 2);
  const auto side = wh.prod(-1, /*keepdim=*/true).clamp_min(0).sqrt();  // (B, M, 1)
  const auto s = anchor_strides.view({1, 1, -1});                       // (1, 1, A)
  const auto finest = s.eq(anchor_strides.min());
  const auto coarsest = s.eq(anchor_strides.max());
  const auto gated = candidates.logical_and(side.ge(s * lo).logical_or(finest))
                         .logical_and(side.le(s * hi).logical_or(coarsest));
  return at::where(gated.any(-1, /*keepdim=*/true), gated, candidates);
}

PoseTaskAlignedAssigner::PoseTaskAlignedAssigner(AssignerOptions options,
                                                 std::vector<double> sigmas)
    : base_(std::move(options)), sigmas_(std::move(sigmas)) {
  if (sigmas_.empty()) throw std::invalid_argument("PoseTaskAlignedAssigner: no keypoint sigmas");
}

Assignment PoseTaskAlignedAssigner::operator()(
    const at::Tensor& pd_scores, const at::Tensor& pd_bboxes, const at::Tensor& anchor_points,
    const at::Tensor& gt_labels, const at::Tensor& gt_bboxes, const at::Tensor& mask_gt,
    const at::Tensor& pd_kpts, const at::Tensor& gt_kpts, const at::Tensor& anchor_strides,
    bool static_shapes) const {
  at::NoGradGuard no_grad;
  // fp32 values, as the reference's float32 sigmas. Static shapes: no tensor made from host
  // values inside the step (a copy a CUDA graph would not replay).
  const auto make_sigmas = [&] {
    return at::tensor(sigmas_, pd_bboxes.options().dtype(at::kDouble)).to(at::kFloat);
  };
  if (static_shapes &&
      (!sigmas_on_device_.defined() || sigmas_on_device_.device() != pd_bboxes.device())) {
    sigmas_on_device_ = make_sigmas();
  }
  const auto sigmas = static_shapes ? sigmas_on_device_ : make_sigmas();
  AssignerHooks hooks;
  hooks.gate_candidates = [&](const at::Tensor& in_gts) {
    return gate_candidates_by_level(in_gts, gt_bboxes, anchor_strides, kLevelLo, kLevelHi);
  };
  hooks.pair_overlaps = [&](const at::Tensor& pairs, const at::Tensor& iou) {
    const auto b = pairs.select(1, 0), g = pairs.select(1, 1), a = pairs.select(1, 2);
    const auto gt = gt_kpts.index({b, g});  // (P, K, 3)
    const auto box = gt_bboxes.index({b, g});
    const auto area = (box.narrow(-1, 2, 2) - box.narrow(-1, 0, 2)).prod(-1, true) * kAreaFactor;
    const auto oks = keypoint_oks(pd_kpts.index({b, a}), gt, area, sigmas, base_.options().eps);
    return at::where(gt.select(-1, 2).gt(0).any(-1), oks.to(iou.scalar_type()), iou);
  };
  hooks.dense_overlaps = [&](const at::Tensor& pair_mask, const at::Tensor& iou) {
    const int64_t bs = gt_kpts.size(0), m = gt_kpts.size(1), k = gt_kpts.size(2);
    const int64_t na = pd_kpts.size(1);
    const auto area = (gt_bboxes.narrow(-1, 2, 2) - gt_bboxes.narrow(-1, 0, 2)).prod(-1, true) *
                      kAreaFactor;                                       // (B, M, 1)
    const auto has_visible = gt_kpts.select(-1, 2).gt(0).any(-1, true);  // (B, M, 1)
    const auto pd = pd_kpts.unsqueeze(1);                                // (B, 1, A, K, 2)
    // (B, rows, A, K) temporaries: rows chosen so that each holds about 2^22 entries.
    const int64_t chunk = dense_overlap_chunk(bs, na * k);
    std::vector<at::Tensor> parts;
    for (int64_t start = 0; start < m; start += chunk) {
      const int64_t rows = std::min(chunk, m - start);
      const auto gt = gt_kpts.narrow(1, start, rows).unsqueeze(2);            // (B, rows, 1, K, 3)
      const auto a = area.narrow(1, start, rows).unsqueeze(2);                // (B, rows, 1, 1)
      parts.push_back(keypoint_oks(pd, gt, a, sigmas, base_.options().eps));  // (B, rows, A)
    }
    const auto oks = at::cat(parts, 1).to(iou.scalar_type());
    return at::where(pair_mask, at::where(has_visible, oks, iou), at::zeros({}, iou.options()));
  };
  return base_(pd_scores, pd_bboxes, anchor_points, gt_labels, gt_bboxes, mask_gt, hooks,
               static_shapes);
}

}  // namespace trainer::loss
