// The per-step loop NMS and per-image decode that the batched NMS replaced, kept as the oracle of
// the fast paths (tests/model/test_postprocess.cpp) and the baseline of bench_nms.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "model/postprocess.h"

namespace trainer::model {

// The implementation before the batched rewrite, kept as the oracle of the fast paths: one kept box
// per loop step on the tensors' device.
inline torch::Tensor loop_nms(const torch::Tensor& boxes, const torch::Tensor& scores,
                              double iou_threshold, int64_t max_keep) {
  const int64_t n = boxes.size(0);
  auto long_opts = torch::TensorOptions().dtype(torch::kLong).device(boxes.device());
  if (n == 0) return torch::empty({0}, long_opts);
  const int64_t limit = max_keep > 0 ? std::min(max_keep, n) : n;
  auto order = std::get<1>(scores.sort(/*stable=*/true, /*dim=*/0, /*descending=*/true));
  auto b = boxes.index_select(0, order).to(torch::kFloat);
  auto x1 = b.select(1, 0), y1 = b.select(1, 1), x2 = b.select(1, 2), y2 = b.select(1, 3);
  auto area = (x2 - x1) * (y2 - y1);
  auto alive = torch::ones({n}, long_opts.dtype(torch::kBool));
  auto kept = torch::empty({limit}, long_opts);
  auto valid = torch::zeros({limit}, long_opts.dtype(torch::kBool));
  for (int64_t step = 0; step < limit; ++step) {
    if (step % 16 == 0 && !alive.any().item<bool>()) break;
    auto i = alive.to(torch::kByte).argmax().view({1});
    kept[step] = i[0];
    valid[step] = alive.index_select(0, i)[0];
    auto ix1 = torch::maximum(x1, x1.index_select(0, i));
    auto iy1 = torch::maximum(y1, y1.index_select(0, i));
    auto ix2 = torch::minimum(x2, x2.index_select(0, i));
    auto iy2 = torch::minimum(y2, y2.index_select(0, i));
    auto inter = (ix2 - ix1).clamp_min(0) * (iy2 - iy1).clamp_min(0);
    auto iou = inter / (area + area.index_select(0, i) - inter);
    alive.logical_and_(iou.gt(iou_threshold).logical_not());
    alive.index_fill_(0, i, false);
  }
  return order.index_select(0, kept.index({valid}));
}

// The per-image decode before the batched rewrite (the oracle of non_max_suppression).
inline std::vector<torch::Tensor> loop_non_max_suppression(const torch::Tensor& preds,
                                                           const PredictOptions& options) {
  const int64_t batch = preds.size(0), nc = preds.size(1) - 4;
  std::vector<torch::Tensor> out;
  for (int64_t bi = 0; bi < batch; ++bi) {
    auto x = preds[bi].t();
    auto parts = x.split({4, nc}, 1);
    auto candidate = parts[1].amax(1) > options.conf;
    auto box = parts[0].index({candidate});
    auto cls = parts[1].index({candidate});
    torch::Tensor rows;
    if (options.multi_label) {
      auto ij = (cls > options.conf).nonzero();
      auto i = ij.select(1, 0), j = ij.select(1, 1);
      rows = torch::cat({box.index_select(0, i), cls.index({i, j}).unsqueeze(1),
                         j.unsqueeze(1).to(x.scalar_type())},
                        1);
    } else {
      auto [conf, j] = cls.max(1, true);
      rows =
          torch::cat({box, conf, j.to(x.scalar_type())}, 1).index({conf.view(-1) > options.conf});
    }
    if (rows.size(0) > options.max_nms) {
      rows = rows.index_select(0, std::get<1>(rows.select(1, 4).topk(options.max_nms)));
    }
    auto offset = rows.slice(1, 5, 6) * (options.agnostic ? 0.0 : kMaxWh);
    auto keep =
        loop_nms(rows.slice(1, 0, 4) + offset, rows.select(1, 4), options.iou, options.max_det);
    out.push_back(rows.index_select(0, keep));
  }
  return out;
}

}  // namespace trainer::model
