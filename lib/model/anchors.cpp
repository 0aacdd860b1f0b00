// See anchors.h.
// Tested by tests/model/test_detect_head.cpp: make_anchors 8400 cell centres level by level with
//   strides, dist2bbox xyxy/xywh.
#include "model/anchors.h"

#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace trainer::model {

Anchors make_anchors(const std::vector<std::pair<int64_t, int64_t>>& level_hw,
                     const std::vector<double>& strides, double offset, at::Device device,
                     at::ScalarType dtype) {
  if (level_hw.size() != strides.size()) {
    throw std::invalid_argument("make_anchors: " + std::to_string(level_hw.size()) +
                                " feature maps but " + std::to_string(strides.size()) + " strides");
  }
  const auto opts = torch::TensorOptions().dtype(dtype).device(device);
  std::vector<at::Tensor> points, stride_list;
  for (size_t i = 0; i < level_hw.size(); ++i) {
    const auto [h, w] = level_hw[i];
    auto sx = torch::arange(w, opts) + offset;
    auto sy = torch::arange(h, opts) + offset;
    auto grid = torch::meshgrid({sy, sx}, "ij");  // grid[0] = y (rows), grid[1] = x
    points.push_back(torch::stack({grid[1], grid[0]}, -1).view({-1, 2}));
    stride_list.push_back(torch::full({h * w, 1}, strides[i], opts));
  }
  return {torch::cat(points, 0), torch::cat(stride_list, 0)};
}

Anchors make_anchors(const std::vector<at::Tensor>& feats, const std::vector<double>& strides,
                     double offset) {
  if (feats.empty()) throw std::invalid_argument("make_anchors: no feature maps");
  return make_anchors(feats, strides, offset, feats[0].scalar_type());
}

Anchors make_anchors(const std::vector<at::Tensor>& feats, const std::vector<double>& strides,
                     double offset, at::ScalarType dtype) {
  std::vector<std::pair<int64_t, int64_t>> hw;
  for (const auto& f : feats) hw.emplace_back(f.size(-2), f.size(-1));
  const auto device = feats.empty() ? at::Device(at::kCPU) : feats.front().device();
  return make_anchors(hw, strides, offset, device, dtype);
}

at::Tensor dist2bbox(const at::Tensor& distance, const at::Tensor& anchor_points, bool xywh,
                     int64_t dim) {
  auto lt_rb = distance.chunk(2, dim);
  auto x1y1 = anchor_points - lt_rb[0];
  auto x2y2 = anchor_points + lt_rb[1];
  if (xywh) return torch::cat({(x1y1 + x2y2) / 2, x2y2 - x1y1}, dim);
  return torch::cat({x1y1, x2y2}, dim);
}

}  // namespace trainer::model
