#include "loss/gt_targets.h"

#include <ATen/ATen.h>

#include <sstream>
#include <stdexcept>

#include "loss/box_ops.h"

namespace trainer::loss {

namespace {

void check_labels(const at::Tensor& labels, int64_t batch_size, int64_t num_classes) {
  if (labels.dim() != 2 || labels.size(1) != 6) {
    std::ostringstream msg;
    msg << "detection loss: labels must be (n, 6) [image_index, class, cx, cy, w, h], got "
        << labels.sizes();
    throw std::invalid_argument(msg.str());
  }
  const auto cpu = labels.to(at::kCPU, at::kDouble).contiguous();
  const auto* row = cpu.data_ptr<double>();
  for (int64_t i = 0; i < cpu.size(0); ++i, row += 6) {
    const bool bad_image = !(row[0] >= 0 && row[0] < batch_size) || row[0] != std::floor(row[0]);
    const bool bad_class = !(row[1] >= 0 && row[1] < num_classes) || row[1] != std::floor(row[1]);
    if (bad_image || bad_class) {
      std::ostringstream msg;
      msg << "detection loss: label row " << i << " has " << (bad_image ? "image index " : "class ")
          << (bad_image ? row[0] : row[1]) << ", outside [0, "
          << (bad_image ? batch_size : num_classes) << ")";
      throw std::invalid_argument(msg.str());
    }
  }
}

}  // namespace

GtTargets pack_targets(const at::Tensor& labels, int64_t batch_size, int64_t num_classes,
                       double image_h, double image_w, at::Device device) {
  // Packing happens where the labels are. From the loader's host labels that needs no device read
  // (the label check and the per-image maximum below are host work) and the packed targets go to
  // `device` in one copy each; device labels still work but cost a sync for the maximum.
  if (labels.device().is_cpu()) {
    check_labels(labels, batch_size, num_classes);
  } else if (labels.dim() != 2 || labels.size(1) != 6) {
    check_labels(labels, batch_size, num_classes);  // the shape error, without reading values
  }
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(labels.device());
  const auto rows = labels.to(opts);
  const int64_t n = rows.size(0);
  int64_t m = 0;
  at::Tensor image, position;
  if (n > 0) {
    image = rows.select(1, 0).to(at::kLong);
    const auto counts = at::bincount(image, {}, batch_size);
    m = counts.max().item<int64_t>();
    // Position of each row within its image, keeping the input order (a stable sort by image).
    const auto order = std::get<1>(image.sort(/*stable=*/true, 0, false));
    const auto starts = counts.cumsum(0) - counts;
    const auto sorted_image = image.index({order});
    position = at::empty_like(image).index_put_(
        {order}, at::arange(n, image.options()) - starts.index({sorted_image}));
  }
  auto packed = at::zeros({batch_size, m, 5}, opts);
  if (n > 0) packed.index_put_({image, position}, rows.narrow(1, 1, 5));
  const auto scale = at::tensor({image_w, image_h, image_w, image_h}, opts);
  GtTargets out;
  const auto to_device = [&](const at::Tensor& t) { return t.to(device, /*non_blocking=*/true); };
  const auto bboxes = xywh_to_xyxy(packed.narrow(-1, 1, 4) * scale);
  out.labels = to_device(packed.narrow(-1, 0, 1).contiguous());
  out.bboxes = to_device(bboxes);
  out.mask = to_device(bboxes.sum(-1, /*keepdim=*/true).gt(0));
  return out;
}

}  // namespace trainer::loss
