// make_anchors and dist2bbox (see anchors.h).
#include "model/anchors.h"

#include <torch/torch.h>

namespace trainer::model {

Anchors make_anchors(const std::vector<at::Tensor>& feats, const std::vector<double>& strides,
                     double offset) {
  TORCH_CHECK(!feats.empty(), "make_anchors: no feature maps");
  return make_anchors(feats, strides, offset, feats[0].scalar_type());
}

Anchors make_anchors(const std::vector<at::Tensor>& feats, const std::vector<double>& strides,
                     double offset, at::ScalarType dtype) {
  TORCH_CHECK(feats.size() == strides.size(), "make_anchors: ", feats.size(), " levels but ",
              strides.size(), " strides");
  std::vector<at::Tensor> points, stride_list;
  for (size_t i = 0; i < feats.size(); ++i) {
    const int64_t h = feats[i].size(2), w = feats[i].size(3);
    const auto opts = torch::TensorOptions().dtype(dtype).device(feats[i].device());
    auto sx = torch::arange(w, opts) + offset;
    auto sy = torch::arange(h, opts) + offset;
    auto grid = torch::meshgrid({sy, sx}, "ij");
    points.push_back(torch::stack({grid[1], grid[0]}, -1).view({-1, 2}));
    stride_list.push_back(torch::full({h * w, 1}, strides[i], opts));
  }
  return {torch::cat(points, 0), torch::cat(stride_list, 0)};
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
