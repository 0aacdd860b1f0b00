// Top-k end-to-end decode and greedy NMS (see postprocess.h).
#include "model/postprocess.h"

#include <torch/torch.h>

#include <limits>
#include <tuple>

#include "model/detection_rows.h"
#include "model/rotated_box_ops.h"

namespace trainer::model {

at::Tensor topk_postprocess(const at::Tensor& preds, int64_t max_det, int64_t extra) {
  const int64_t b = preds.size(0), a = preds.size(1), nc = preds.size(2) - 4 - extra;
  const int64_t k = std::min(max_det, a);
  auto parts = preds.split({4, nc, extra}, -1);
  auto index = std::get<1>(parts[1].amax(-1).topk(k)).unsqueeze(-1);  // (B, k, 1)
  auto boxes = parts[0].gather(1, index.expand({b, k, 4}));
  auto scores = parts[1].gather(1, index.expand({b, k, nc}));
  auto [top_scores, flat] = scores.flatten(1).topk(k);  // (B, k) over anchors x classes
  auto anchor = torch::div(flat, nc, "floor");
  auto cls = flat.remainder(nc);
  auto picked = boxes.gather(1, anchor.unsqueeze(-1).expand({b, k, 4}));
  auto row =
      torch::cat({picked, top_scores.unsqueeze(-1), cls.unsqueeze(-1).to(preds.scalar_type())}, -1);
  if (extra == 0) return row;
  // The anchor index of each pick, back in the full anchor list.
  auto chosen = index.squeeze(-1).gather(1, anchor);
  return torch::cat({row, parts[2].gather(1, chosen.unsqueeze(-1).expand({b, k, extra}))}, -1);
}

at::Tensor filter_by_confidence(const at::Tensor& rows, double conf, int64_t max_det) {
  auto kept = rows.index({rows.select(1, 4) > conf});
  return kept.size(0) > max_det ? kept.slice(0, 0, max_det) : kept;
}

at::Tensor nms(const at::Tensor& boxes, const at::Tensor& scores, double iou_threshold,
               int64_t max_keep, NmsMethod method) {
  const int64_t n = boxes.size(0);
  auto long_opts = torch::TensorOptions().dtype(torch::kLong);
  if (n == 0) return torch::empty({0}, long_opts.device(boxes.device()));
  auto order = std::get<1>(scores.sort(/*stable=*/true, /*dim=*/0, /*descending=*/true));
  const auto kept = greedy_nms_sorted(boxes.index_select(0, order).unsqueeze(0), {n}, iou_threshold,
                                      max_keep, method)[0];
  const at::Tensor positions =
      torch::tensor(kept, long_opts).to(boxes.device(), /*non_blocking=*/true);
  return order.index_select(0, positions);
}

at::Tensor rotated_fast_nms(const at::Tensor& boxes, double iou_threshold, int64_t max_keep) {
  if (boxes.size(0) == 0) return torch::empty({0}, boxes.options().dtype(torch::kLong));
  const at::Tensor ious = batch_probiou(boxes, boxes).triu_(1);
  at::Tensor keep = (ious > iou_threshold).sum(0).le(0).nonzero().squeeze(-1);
  if (max_keep > 0 && keep.size(0) > max_keep) keep = keep.narrow(0, 0, max_keep);
  return keep;
}

std::vector<at::Tensor> non_max_suppression(const at::Tensor& preds, const PredictOptions& options,
                                            int64_t extra, NmsMethod method) {
  const int64_t batch = preds.size(0), nc = preds.size(1) - 4 - extra, anchors = preds.size(2);
  const int64_t columns = kRowFixedColumns + extra;
  const auto x = preds.transpose(1, 2);  // (B, A, 4 + nc + extra)
  const auto box = x.narrow(2, 0, 4);
  const auto cls = x.narrow(2, 4, nc);
  // Candidates per image in the order the per-image loop had them: (anchor, class) pairs
  // anchor-major (multi-label), or anchors with their best class.
  at::Tensor score;  // (B, K)
  at::Tensor best_class;
  if (options.multi_label) {
    score = cls.reshape({batch, anchors * nc});
  } else {
    std::tie(score, best_class) = cls.max(2);
  }
  const at::Tensor candidate = score > options.conf;
  // Sync 1 of 2: how many candidates each image has (sizes the work below).
  const at::Tensor counts_host = candidate.sum(1).to(torch::kCPU);
  std::vector<int64_t> counts(static_cast<size_t>(batch));
  int64_t width = 0;
  for (int64_t b = 0; b < batch; ++b) {
    counts[b] = std::min(counts_host[b].item<int64_t>(), options.max_nms);
    width = std::max(width, counts[b]);
  }
  std::vector<at::Tensor> out;
  if (width == 0) {
    for (int64_t b = 0; b < batch; ++b) out.push_back(torch::empty({0, columns}, x.options()));
    return out;
  }
  // The best `width` candidates of each image (the rest are -inf and sort last), then in visiting
  // order: descending score, ties by candidate index (what a stable sort of the candidates gives).
  const at::Tensor masked =
      score.masked_fill(candidate.logical_not(), -std::numeric_limits<double>::infinity());
  auto [top, index] = masked.topk(width, 1);
  auto [by_index, perm] = index.sort(1);
  auto [sorted_score, perm2] =
      top.gather(1, perm).sort(/*stable=*/true, /*dim=*/1, /*descending=*/true);
  const at::Tensor flat = by_index.gather(1, perm2);  // (B, W)
  const at::Tensor anchor = options.multi_label ? torch::div(flat, nc, "floor") : flat;
  const at::Tensor klass = options.multi_label ? flat.remainder(nc) : best_class.gather(1, flat);
  std::vector<at::Tensor> columns_of = {
      box.gather(1, anchor.unsqueeze(-1).expand({batch, width, 4})), sorted_score.unsqueeze(-1),
      klass.unsqueeze(-1).to(x.scalar_type())};
  if (extra > 0) {
    columns_of.push_back(
        x.narrow(2, 4 + nc, extra).gather(1, anchor.unsqueeze(-1).expand({batch, width, extra})));
  }
  const at::Tensor rows = torch::cat(columns_of, -1);  // (B, W, 6 + extra)
  auto offset = rows.narrow(2, 5, 1) * (options.agnostic ? 0.0 : kMaxWh);
  std::vector<std::vector<int64_t>> kept;
  if (options.rotated) {
    TORCH_CHECK(extra >= 1, "rotated NMS: the angle must be the last extra channel");
    // The class offset moves the centre only; one Fast-NMS (and one device read) per image.
    const at::Tensor boxes = torch::cat(
        {rows.narrow(2, 0, 2) + offset, rows.narrow(2, 2, 2), rows.narrow(2, columns - 1, 1)}, -1);
    for (int64_t b = 0; b < batch; ++b) {
      const at::Tensor keep =
          rotated_fast_nms(boxes[b].narrow(0, 0, counts[b]), options.iou, options.max_det)
              .to(torch::kCPU);
      kept.emplace_back(keep.data_ptr<int64_t>(), keep.data_ptr<int64_t>() + keep.numel());
    }
  } else {
    // Sync 2 of 2 (on a GPU): the suppression bitmask.
    kept = greedy_nms_sorted(rows.narrow(2, 0, 4) + offset, counts, options.iou, options.max_det,
                             method);
  }
  std::vector<int64_t> flat_keep;
  std::vector<int64_t> sizes;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t k : kept[b]) flat_keep.push_back(b * width + k);
    sizes.push_back(static_cast<int64_t>(kept[b].size()));
  }
  const at::Tensor keep = torch::tensor(flat_keep, torch::TensorOptions().dtype(torch::kLong))
                              .to(x.device(), /*non_blocking=*/true);
  return rows.reshape({batch * width, columns}).index_select(0, keep).split_with_sizes(sizes);
}

}  // namespace trainer::model
