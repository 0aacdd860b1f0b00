// Tested by tests/loss/test_assigner.cpp: candidates with STAL, top-k picks and normalised scores,
//   topk2, conflict resolution, padding, no GTs.
#include "loss/task_aligned_assigner.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "loss/box_ops.h"
#include "loss/dense_assigner_cpu.h"

namespace trainer::loss {

using at::indexing::Slice;

double stal_stride(const AssignerOptions& options) {
  return options.strides.size() > 1 ? options.strides[1] : options.strides.at(0);
}

at::Tensor select_candidates_in_gts(const at::Tensor& anchor_points, const at::Tensor& gt_bboxes,
                                    const at::Tensor& mask_gt, const AssignerOptions& options) {
  // STAL: a valid GT side shorter than stride_val (the second stride, 16 px) is widened to it for
  // this inside-the-box test only (the overlaps below still use the real box). 8.4.190 compares
  // with stride_val itself; older releases compared with the finest stride (8 px).
  const double stal_side = stal_stride(options);
  const auto xywh = xyxy_to_xywh(gt_bboxes);
  const auto wh = xywh.narrow(-1, 2, 2);
  const auto small = wh.lt(stal_side).logical_and(mask_gt.to(at::kBool));
  const auto widened = at::where(small, at::scalar_tensor(stal_side, wh.options()), wh);
  const auto boxes = xywh_to_xyxy(at::cat({xywh.narrow(-1, 0, 2), widened}, -1));

  // The smallest of the four margins > eps. Pairwise minimums of the (B, M, A) margins give the
  // same values as a min over a (B, M, A, 4) stack of them, without making the stack.
  const auto x = anchor_points.select(-1, 0).view({1, 1, -1});  // (1, 1, A)
  const auto y = anchor_points.select(-1, 1).view({1, 1, -1});
  const auto side = [&](int64_t i) { return boxes.select(-1, i).unsqueeze(-1); };  // (B, M, 1)
  const auto horizontal = at::minimum(x - side(0), side(2) - x);
  const auto vertical = at::minimum(y - side(1), side(3) - y);
  return at::minimum(horizontal, vertical).gt(options.eps);
}

at::Tensor select_topk_candidates(const at::Tensor& metric, const at::Tensor& valid_gt,
                                  int64_t topk) {
  auto idx = std::get<1>(metric.topk(topk, -1, /*largest=*/true));  // (B, M, k)
  // Padding GTs point all k picks at anchor 0, which then counts k > 1 and is cleared below
  // (the reference's trick; with topk == 1 the mask below does it instead).
  idx = idx.masked_fill(valid_gt.to(at::kBool).logical_not().expand_as(idx), 0);
  auto count = at::zeros(metric.sizes(), metric.options().dtype(at::kInt));
  count.scatter_add_(-1, idx, at::ones_like(idx, idx.options().dtype(at::kInt)));
  count.masked_fill_(count.gt(1), 0);
  auto mask = count.to(metric.scalar_type());
  return mask * valid_gt.to(metric.scalar_type());
}

HighestOverlaps select_highest_overlaps(at::Tensor mask_pos, const at::Tensor& overlaps,
                                        const at::Tensor& align_metric, int64_t topk,
                                        int64_t topk2) {
  auto fg_mask = mask_pos.sum(-2);  // (B, A)
  if (fg_mask.numel() > 0) {
    // An anchor claimed by several GTs goes to the GT it overlaps most. Done unconditionally (a
    // no-op where no anchor is claimed twice), so that no host read decides it.
    const auto multi = fg_mask.unsqueeze(1).gt(1).expand_as(mask_pos);
    const auto best = overlaps.argmax(1, /*keepdim=*/true);  // (B, 1, A)
    const auto is_best = at::zeros_like(mask_pos).scatter_(1, best, 1.0);
    mask_pos = at::where(multi, is_best, mask_pos);
    fg_mask = mask_pos.sum(-2);
  }
  if (topk2 != topk && mask_pos.size(-1) > 0) {
    // Second pass: each GT keeps its top-topk2 surviving positives by alignment.
    const auto k2 = std::min<int64_t>(topk2, mask_pos.size(-1));
    const auto idx = std::get<1>((align_metric * mask_pos).topk(k2, -1, /*largest=*/true));
    const auto keep = at::zeros_like(mask_pos).scatter_(-1, idx, 1.0);
    mask_pos = mask_pos * keep;
    fg_mask = mask_pos.sum(-2);
  }
  return {mask_pos.argmax(-2), fg_mask, mask_pos};
}

Positives select_positives(const at::Tensor& align_metric, const at::Tensor& overlaps,
                           const at::Tensor& pair_mask, const at::Tensor& valid,
                           const AssignerOptions& options) {
  const int64_t na = align_metric.size(-1);
  const auto topk_mask = select_topk_candidates(align_metric, valid, std::min(options.topk, na));
  const auto mask_pos0 = topk_mask * pair_mask.to(topk_mask.scalar_type());
  auto picked =
      select_highest_overlaps(mask_pos0, overlaps, align_metric, options.topk, options.topk2);
  const auto& mask_pos = picked.mask_pos;
  const auto aligned = align_metric * mask_pos;
  const auto pos_align = std::get<0>(aligned.max(-1, /*keepdim=*/true));  // (B, M, 1)
  const auto pos_overlaps = std::get<0>((overlaps * mask_pos).max(-1, /*keepdim=*/true));
  auto norm =
      std::get<0>((aligned * pos_overlaps / (pos_align + options.eps)).max(-2)).unsqueeze(-1);
  return {std::move(picked.target_gt_idx), std::move(picked.fg_mask), std::move(norm)};
}

int64_t dense_overlap_chunk(int64_t batch_size, int64_t anchors) {
  constexpr int64_t kEntries = int64_t{1} << 22;
  return std::max<int64_t>(1, kEntries / std::max<int64_t>(1, batch_size * anchors));
}

namespace {

// The overlaps of the candidate pairs, (B, M, A), 0 elsewhere. Selecting: computed on the selected
// pairs. Static: on every entry (the CPU's CIoU fused over the candidates, box_ops.h; otherwise
// element-wise, a chunk of GT rows at a time, the non-candidates' values discarded by the where).
at::Tensor candidate_overlaps(const at::Tensor& gt_bboxes, const at::Tensor& pd_bboxes,
                              const at::Tensor& pair_mask, const AssignerHooks& hooks,
                              bool static_shapes, bool fused_cpu) {
  const int64_t bs = gt_bboxes.size(0), m = gt_bboxes.size(1), d = gt_bboxes.size(-1);
  const int64_t na = pd_bboxes.size(1);
  const auto overlap_of = [&](const at::Tensor& gt, const at::Tensor& pd) {
    return hooks.box_overlap ? hooks.box_overlap(gt, pd)
                             : bbox_iou(gt, pd, IouKind::kCiou).squeeze(-1).clamp_min(0);
  };
  if (!static_shapes) {
    const auto gt_sel = gt_bboxes.unsqueeze(2).expand({bs, m, na, d}).index({pair_mask});
    const auto pd_sel = pd_bboxes.unsqueeze(1).expand({bs, m, na, d}).index({pair_mask});
    auto values = overlap_of(gt_sel, pd_sel);
    if (hooks.pair_overlaps) values = hooks.pair_overlaps(pair_mask.nonzero(), values);
    auto overlaps = at::zeros({bs, m, na}, pd_bboxes.options());
    overlaps.index_put_({pair_mask}, values);
    return overlaps;
  }
  if (fused_cpu && !hooks.box_overlap && pd_bboxes.device().is_cpu() &&
      pd_bboxes.scalar_type() == at::kFloat) {
    return masked_pair_ciou_cpu(gt_bboxes, pd_bboxes, pair_mask);
  }
  const int64_t chunk = dense_overlap_chunk(bs, na);
  std::vector<at::Tensor> parts;
  for (int64_t start = 0; start < m; start += chunk) {
    const int64_t rows = std::min(chunk, m - start);
    // Broadcast, not expanded: what depends on one box alone (sides, areas, CIoU's aspect atan)
    // is computed once per GT and once per anchor, only the pairwise terms per pair.
    const auto gt = gt_bboxes.narrow(1, start, rows).unsqueeze(2);  // (B, rows, 1, D)
    const auto pd = pd_bboxes.unsqueeze(1);                         // (B, 1, A, D)
    const auto values = overlap_of(gt, pd);                         // (B, rows, A)
    parts.push_back(
        at::where(pair_mask.narrow(1, start, rows), values, at::zeros({}, values.options())));
  }
  return at::cat(parts, 1);
}

}  // namespace

TaskAlignedAssigner::TaskAlignedAssigner(AssignerOptions options) : options_(std::move(options)) {
  if (options_.topk2 < 0) options_.topk2 = options_.topk;
  if (options_.topk < 1 || options_.topk2 < 1 || options_.num_classes < 1 ||
      options_.strides.empty())
    throw std::invalid_argument(
        "TaskAlignedAssigner: topk, topk2, num_classes must be >= 1 and "
        "strides non-empty");
}

Assignment TaskAlignedAssigner::operator()(const at::Tensor& pd_scores, const at::Tensor& pd_bboxes,
                                           const at::Tensor& anchor_points,
                                           const at::Tensor& gt_labels, const at::Tensor& gt_bboxes,
                                           const at::Tensor& mask_gt, bool static_shapes) const {
  return (*this)(pd_scores, pd_bboxes, anchor_points, gt_labels, gt_bboxes, mask_gt,
                 AssignerHooks{}, static_shapes);
}

Assignment TaskAlignedAssigner::operator()(const at::Tensor& pd_scores, const at::Tensor& pd_bboxes,
                                           const at::Tensor& anchor_points,
                                           const at::Tensor& gt_labels, const at::Tensor& gt_bboxes,
                                           const at::Tensor& mask_gt, const AssignerHooks& hooks,
                                           bool static_shapes) const {
  at::NoGradGuard no_grad;
  const int64_t bs = pd_scores.size(0);
  const int64_t na = pd_scores.size(1);
  const int64_t nc = options_.num_classes;
  const int64_t m = gt_bboxes.size(1);
  const int64_t d = gt_bboxes.size(-1);  // box width: 4 (xyxy), 5 for the OBB hooks
  const auto long_opts = pd_scores.options().dtype(at::kLong);
  if (m == 0 || na == 0) {
    return {at::full({bs, na}, nc, long_opts), at::zeros({bs, na, d}, pd_bboxes.options()),
            at::zeros({bs, na, nc}, pd_scores.options()),
            at::zeros({bs, na}, pd_scores.options().dtype(at::kBool)),
            at::zeros({bs, na}, long_opts)};
  }
  const auto valid = mask_gt.to(at::kBool);  // (B, M, 1)
  // The CPU's fused static passes (dense_assigner_cpu.h): fp32 only, the candidates and overlaps
  // fused for detection (no hooks), the positives for every task.
  const bool fused_cpu = options_.fused_cpu && static_shapes && pd_bboxes.device().is_cpu() &&
                         pd_scores.scalar_type() == at::kFloat &&
                         pd_bboxes.scalar_type() == at::kFloat &&
                         gt_bboxes.scalar_type() == at::kFloat;
  const bool no_hooks = !hooks.candidates && !hooks.box_overlap && !hooks.gate_candidates &&
                        !hooks.pair_overlaps && !hooks.dense_overlaps;
  if (static_shapes && hooks.pair_overlaps && !hooks.dense_overlaps) {
    throw std::invalid_argument("assigner: static shapes need dense_overlaps for pair_overlaps");
  }

  // Candidates and the alignment metric, computed only where the anchor is inside a valid GT.
  at::Tensor pair_mask;     // (B, M, A) bool
  at::Tensor overlaps;      // (B, M, A), 0 off the candidate pairs
  at::Tensor align_metric;  // (B, M, A)
  if (fused_cpu && no_hooks && anchor_points.scalar_type() == at::kFloat) {
    auto pairs = dense_pairs_cpu(pd_scores, pd_bboxes, anchor_points, gt_labels, gt_bboxes, mask_gt,
                                 options_);
    pair_mask = std::move(pairs.pair_mask);
    overlaps = std::move(pairs.overlaps);
    align_metric = std::move(pairs.align_metric);
  } else {
    auto in_gts = hooks.candidates
                      ? hooks.candidates(anchor_points, gt_bboxes, mask_gt)
                      : select_candidates_in_gts(anchor_points, gt_bboxes, mask_gt, options_);
    if (hooks.gate_candidates) in_gts = hooks.gate_candidates(in_gts);
    pair_mask = in_gts.logical_and(valid);
    const auto cls = gt_labels.squeeze(-1).to(at::kLong);  // (B, M)
    const auto cls_scores =
        pd_scores.transpose(1, 2).gather(1, cls.unsqueeze(-1).expand({bs, m, na}));
    const auto bbox_scores = at::where(pair_mask, cls_scores, at::zeros({}, pd_scores.options()));
    overlaps = candidate_overlaps(gt_bboxes, pd_bboxes, pair_mask, hooks, static_shapes,
                                  options_.fused_cpu);
    if (static_shapes && hooks.dense_overlaps) overlaps = hooks.dense_overlaps(pair_mask, overlaps);
    align_metric = bbox_scores.pow(options_.alpha) * overlaps.pow(options_.beta);
  }

  const bool fused_positives =
      fused_cpu && align_metric.scalar_type() == at::kFloat && overlaps.scalar_type() == at::kFloat;
  const auto picked = fused_positives
                          ? dense_positives_cpu(align_metric, overlaps, pair_mask, mask_gt,
                                                options_.topk, options_.topk2, options_.eps)
                          : select_positives(align_metric, overlaps, pair_mask, valid, options_);
  const auto& target_gt_idx = picked.target_gt_idx;
  const auto& fg_mask = picked.fg_mask;
  const auto& norm = picked.norm;

  // Targets gathered from each anchor's GT.
  const auto flat_idx = target_gt_idx + at::arange(bs, long_opts).unsqueeze(-1) * m;
  auto target_labels = gt_labels.to(at::kLong).flatten().index({flat_idx}).clamp_min(0);  // (B, A)
  const auto target_bboxes = gt_bboxes.reshape({-1, d}).index({flat_idx});  // (B, A, D)
  const auto fg = fg_mask.gt(0);
  auto one_hot = at::zeros({bs, na, nc}, pd_scores.options())
                     .scatter_(2, target_labels.unsqueeze(-1), 1.0)
                     .mul_(fg.unsqueeze(-1).to(pd_scores.scalar_type()));
  return {target_labels, target_bboxes, one_hot * norm, fg, target_gt_idx, static_shapes};
}

}  // namespace trainer::loss
