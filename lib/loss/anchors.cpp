#include "loss/anchors.h"

#include <ATen/ATen.h>

#include <stdexcept>

namespace trainer::loss {

Anchors make_anchors(const std::vector<std::pair<int64_t, int64_t>>& level_hw,
                     const std::vector<double>& strides, double offset, at::Device device) {
  if (level_hw.size() != strides.size())
    throw std::invalid_argument("make_anchors: " + std::to_string(level_hw.size()) +
                                " feature maps but " + std::to_string(strides.size()) + " strides");
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(device);
  std::vector<at::Tensor> points, stride_list;
  for (size_t i = 0; i < level_hw.size(); ++i) {
    const auto [h, w] = level_hw[i];
    const auto sx = at::arange(w, opts) + offset;
    const auto sy = at::arange(h, opts) + offset;
    const auto grid = at::meshgrid({sy, sx}, "ij");  // grid[0] = y (rows), grid[1] = x
    points.push_back(at::stack({grid[1], grid[0]}, -1).view({-1, 2}));
    stride_list.push_back(at::full({h * w, 1}, strides[i], opts));
  }
  return {at::cat(points), at::cat(stride_list)};
}

Anchors make_anchors(const std::vector<at::Tensor>& feats, const std::vector<double>& strides,
                     double offset) {
  std::vector<std::pair<int64_t, int64_t>> hw;
  for (const auto& f : feats) hw.emplace_back(f.size(-2), f.size(-1));
  const auto device = feats.empty() ? at::Device(at::kCPU) : feats.front().device();
  return make_anchors(hw, strides, offset, device);
}

at::Tensor dist_to_bbox(const at::Tensor& distance, const at::Tensor& points, bool xywh) {
  const auto lt = distance.narrow(-1, 0, 2);
  const auto rb = distance.narrow(-1, 2, 2);
  const auto x1y1 = points - lt;
  const auto x2y2 = points + rb;
  if (xywh) return at::cat({(x1y1 + x2y2) / 2, x2y2 - x1y1}, -1);
  return at::cat({x1y1, x2y2}, -1);
}

at::Tensor bbox_to_dist(const at::Tensor& points, const at::Tensor& boxes, double max_dist) {
  auto dist = at::cat({points - boxes.narrow(-1, 0, 2), boxes.narrow(-1, 2, 2) - points}, -1);
  if (max_dist >= 0) dist = dist.clamp(0, max_dist);
  return dist;
}

}  // namespace trainer::loss
