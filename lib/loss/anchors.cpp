// See anchors.h.
#include "loss/anchors.h"

#include <ATen/ATen.h>

namespace trainer::loss {

at::Tensor dist_to_bbox(const at::Tensor& distance, const at::Tensor& points, bool xywh) {
  return model::dist2bbox(distance, points, xywh, -1);
}

at::Tensor bbox_to_dist(const at::Tensor& points, const at::Tensor& boxes, double max_dist) {
  auto dist = at::cat({points - boxes.narrow(-1, 0, 2), boxes.narrow(-1, 2, 2) - points}, -1);
  if (max_dist >= 0) dist = dist.clamp(0, max_dist);
  return dist;
}

}  // namespace trainer::loss
