// Tested by tests/loss/test_keypoint_loss.cpp: pack_keypoints: slots of pack_targets, pixels,
//   visibility appended for ndim 2.
#include "loss/keypoint_targets.h"

#include <ATen/ATen.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace trainer::loss {

at::Tensor pack_keypoints(const at::Tensor& labels, const at::Tensor& keypoints, int64_t batch_size,
                          double image_h, double image_w, at::Device device,
                          int64_t static_instances) {
  if (!keypoints.defined() || keypoints.dim() != 3 || keypoints.size(0) != labels.size(0) ||
      (keypoints.size(2) != 2 && keypoints.size(2) != 3)) {
    std::ostringstream msg;
    msg << "pose loss: keypoints must be (n, K, 2 or 3) for the " << labels.size(0)
        << " label rows, got " << (keypoints.defined() ? keypoints.sizes() : at::IntArrayRef{});
    throw std::invalid_argument(msg.str());
  }
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(labels.device());
  auto kpts = keypoints.to(opts);
  if (kpts.size(2) == 2) kpts = at::cat({kpts, at::ones_like(kpts.narrow(2, 0, 1))}, 2);
  const int64_t n = kpts.size(0);
  const int64_t k = kpts.size(1);
  int64_t m = 0;
  at::Tensor image, position;
  if (n > 0) {
    // The slot of each row within its image, in input order (as pack_targets).
    image = labels.select(1, 0).to(opts).to(at::kLong);
    const auto counts = at::bincount(image, {}, batch_size);
    m = counts.max().item<int64_t>();
    if (static_instances > 0 && m > static_instances) {
      throw std::invalid_argument("pose loss: an image has " + std::to_string(m) +
                                  " keypoint rows, more than the static shapes' " +
                                  std::to_string(static_instances));
    }
    const auto starts = counts.cumsum(0) - counts;
    const auto order = std::get<1>(image.sort(/*stable=*/true, 0, false));
    position = at::empty_like(image).index_put_(
        {order}, at::arange(n, image.options()) - starts.index({image.index({order})}));
  }
  if (static_instances > 0) m = static_instances;
  auto packed = at::zeros({batch_size, m, k, 3}, opts);
  if (n > 0) packed.index_put_({image, position}, kpts);
  const auto scale = at::tensor({image_w, image_h, 1.0}, opts);
  return (packed * scale).to(device, /*non_blocking=*/true);
}

}  // namespace trainer::loss
