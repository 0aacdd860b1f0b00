// Tested by tests/loss/test_yolo_loss.cpp: pack_targets keeps per-image order, pixel xyxy, padding
//   mask, empty labels (pack_rotated_targets in test_obb_loss).
#include "loss/gt_targets.h"

#include <ATen/ATen.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

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

namespace {

// Position of each row within its image, keeping the input order (a stable sort by image).
at::Tensor slots_in_images(const at::Tensor& image, const at::Tensor& counts) {
  const int64_t n = image.size(0);
  const auto order = std::get<1>(image.sort(/*stable=*/true, 0, false));
  const auto starts = counts.cumsum(0) - counts;
  const auto sorted_image = image.index({order});
  return at::empty_like(image).index_put_(
      {order}, at::arange(n, image.options()) - starts.index({sorted_image}));
}

// rows (n, 1 + C) [image_index, values...] -> (B, M, C), each image's rows in their input order.
// M: the largest count of any image, or `fixed_m` when > 0 (static shapes).
at::Tensor pack_by_image(const at::Tensor& rows, int64_t batch_size, int64_t fixed_m) {
  const int64_t n = rows.size(0), c = rows.size(1) - 1;
  int64_t m = fixed_m;
  at::Tensor image, position;
  if (n > 0) {
    image = rows.select(1, 0).to(at::kLong);
    const auto counts = at::bincount(image, {}, batch_size);
    const int64_t largest = counts.max().item<int64_t>();
    if (fixed_m > 0 && largest > fixed_m) {
      throw std::invalid_argument("loss: an image holds " + std::to_string(largest) +
                                  " objects, more than the static shapes' " +
                                  std::to_string(fixed_m) + " (cap them first: max_instances)");
    }
    if (fixed_m == 0) m = largest;
    position = slots_in_images(image, counts);
  }
  auto packed = at::zeros({batch_size, m, c}, rows.options());
  if (n > 0) packed.index_put_({image, position}, rows.narrow(1, 1, c));
  return packed;
}

// The label check, on the host where the labels are (no device read), or the shape check alone.
void check_label_rows(const at::Tensor& labels, int64_t batch_size, int64_t num_classes) {
  if (labels.device().is_cpu() || labels.dim() != 2 || labels.size(1) != 6) {
    check_labels(labels, batch_size, num_classes);
  }
}

}  // namespace

GtTargets pack_targets(const at::Tensor& labels, int64_t batch_size, int64_t num_classes,
                       double image_h, double image_w, at::Device device,
                       int64_t static_instances) {
  // Packing happens where the labels are. From the loader's host labels that needs no device read
  // (the label check and the per-image maximum below are host work) and the packed targets go to
  // `device` in one copy each; device labels still work but cost a sync for the maximum.
  check_label_rows(labels, batch_size, num_classes);
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(labels.device());
  const auto packed =
      pack_by_image(labels.to(opts), batch_size, static_instances);  // (B, M, 5) [cls, xywh]
  const auto scale = at::tensor({image_w, image_h, image_w, image_h}, opts);
  GtTargets out;
  const auto to_device = [&](const at::Tensor& t) { return t.to(device, /*non_blocking=*/true); };
  const auto bboxes = xywh_to_xyxy(packed.narrow(-1, 1, 4) * scale);
  out.labels = to_device(packed.narrow(-1, 0, 1).contiguous());
  out.bboxes = to_device(bboxes);
  out.mask = to_device(bboxes.sum(-1, /*keepdim=*/true).gt(0));
  out.static_shapes = static_instances > 0;
  return out;
}

GtTargets pack_rotated_targets(const at::Tensor& labels, const at::Tensor& rboxes,
                               int64_t batch_size, int64_t num_classes, double image_h,
                               double image_w, at::Device device, int64_t static_instances) {
  check_label_rows(labels, batch_size, num_classes);
  if (!rboxes.defined() || rboxes.dim() != 2 || rboxes.size(1) != 5 ||
      rboxes.size(0) != labels.size(0)) {
    std::ostringstream msg;
    msg << "OBB loss: rotated boxes must be (n, 5) beside labels (n, 6), got "
        << (rboxes.defined() ? rboxes.sizes() : at::IntArrayRef{}) << " and " << labels.sizes()
        << " (is this an OBB dataset?)";
    throw std::invalid_argument(msg.str());
  }
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(labels.device());
  const auto r = rboxes.to(opts);
  // Tiny rotated boxes (under 2 px a side) are dropped, as the reference does to steady training.
  const auto keep =
      r.select(1, 2).mul(image_w).ge(2).logical_and(r.select(1, 3).mul(image_h).ge(2));
  const auto scale = at::tensor({image_w, image_h, image_w, image_h, 1.0}, opts);
  const auto rows = at::cat({labels.to(opts).narrow(1, 0, 2), r * scale}, 1).index({keep});
  // (B, M, 6) [cls, cx, cy, w, h, angle]. The drop above is host work on the host labels; with
  // static shapes M stays fixed whatever it dropped.
  const auto packed = pack_by_image(rows, batch_size, static_instances);
  GtTargets out;
  const auto to_device = [&](const at::Tensor& t) { return t.to(device, /*non_blocking=*/true); };
  const auto bboxes = packed.narrow(-1, 1, 5).contiguous();
  out.labels = to_device(packed.narrow(-1, 0, 1).contiguous());
  out.bboxes = to_device(bboxes);
  out.mask = to_device(bboxes.sum(-1, /*keepdim=*/true).gt(0));
  out.static_shapes = static_instances > 0;
  return out;
}

at::Tensor pack_rows(const at::Tensor& labels, const at::Tensor& values, int64_t batch_size,
                     int64_t slots) {
  if (labels.size(0) != values.size(0)) {
    throw std::invalid_argument("pack_rows: " + std::to_string(values.size(0)) + " values for " +
                                std::to_string(labels.size(0)) + " label rows");
  }
  std::vector<int64_t> shape = {batch_size, slots};
  for (int64_t d = 1; d < values.dim(); ++d) shape.push_back(values.size(d));
  auto packed = at::zeros(shape, values.options());
  if (values.size(0) == 0) return packed;
  const auto image = labels.select(1, 0).to(values.device()).to(at::kLong);
  const auto counts = at::bincount(image, {}, batch_size);
  if (counts.max().item<int64_t>() > slots) {
    throw std::invalid_argument("pack_rows: an image has more rows than the " +
                                std::to_string(slots) + " slots");
  }
  packed.index_put_({image, slots_in_images(image, counts)}, values);
  return packed;
}

}  // namespace trainer::loss
