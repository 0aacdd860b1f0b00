// See instance_cap.h.
// Tested by tests/loss/test_static_loss.cpp: cap_instances drops smallest objects keeping order
//   (keypoints/rboxes follow), index masks renumbered.
#include "loss/instance_cap.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainer::loss {

namespace {

// Rows of the same length as the labels follow the kept rows.
void keep_rows(at::Tensor& rows, const at::Tensor& kept, int64_t n) {
  if (rows.defined() && rows.dim() > 0 && rows.size(0) == n) rows = rows.index_select(0, kept);
}

}  // namespace

InstanceCap cap_instances(LossTargets& targets, int64_t batch_size, int64_t max_instances) {
  if (max_instances < 1) {
    throw std::invalid_argument("cap_instances: max_instances must be >= 1, got " +
                                std::to_string(max_instances));
  }
  const auto& labels = targets.labels;
  if (!labels.defined() || labels.size(0) == 0) return {};
  if (!labels.device().is_cpu()) {
    throw std::invalid_argument("cap_instances: the labels must be host tensors");
  }
  const int64_t n = labels.size(0);
  const auto rows = labels.to(at::kDouble).contiguous();
  const auto* r = rows.data_ptr<double>();
  std::vector<std::vector<int64_t>> by_image(static_cast<size_t>(batch_size));
  for (int64_t i = 0; i < n; ++i) {
    const auto image = static_cast<int64_t>(r[i * 6]);
    if (image < 0 || image >= batch_size) {
      throw std::invalid_argument("cap_instances: label row " + std::to_string(i) +
                                  " has image index " + std::to_string(image) + ", outside [0, " +
                                  std::to_string(batch_size) + ")");
    }
    by_image[static_cast<size_t>(image)].push_back(i);
  }
  std::vector<char> keep(static_cast<size_t>(n), 1);
  int64_t dropped = 0, largest = 0;
  for (const auto& image_rows : by_image) {
    const auto count = static_cast<int64_t>(image_rows.size());
    largest = std::max(largest, count);
    if (count <= max_instances) continue;
    std::vector<int64_t> order(image_rows);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return r[a * 6 + 4] * r[a * 6 + 5] > r[b * 6 + 4] * r[b * 6 + 5];
    });
    for (size_t k = static_cast<size_t>(max_instances); k < order.size(); ++k) {
      keep[static_cast<size_t>(order[k])] = 0;
    }
    dropped += count - max_instances;
  }
  if (dropped == 0) return {0, largest};

  std::vector<int64_t> kept_rows;
  kept_rows.reserve(static_cast<size_t>(n - dropped));
  for (int64_t i = 0; i < n; ++i) {
    if (keep[static_cast<size_t>(i)]) kept_rows.push_back(i);
  }
  const auto kept = at::tensor(kept_rows, at::kLong);
  if (targets.overlap_masks && targets.masks.defined() && targets.masks.dim() == 3 &&
      targets.masks.size(0) == batch_size) {
    // Pixel j + 1 names the image's j-th row: renumber by a table per image, 0 for dropped rows.
    auto masks = targets.masks.clone();
    for (int64_t b = 0; b < batch_size; ++b) {
      const auto& image_rows = by_image[static_cast<size_t>(b)];
      if (static_cast<int64_t>(image_rows.size()) <= max_instances) continue;
      std::vector<int64_t> table(image_rows.size() + 1, 0);
      int64_t next = 1;
      for (size_t j = 0; j < image_rows.size(); ++j) {
        if (keep[static_cast<size_t>(image_rows[j])]) table[j + 1] = next++;
      }
      const auto lookup = at::tensor(table, at::kLong);
      const auto index = masks[b].to(at::kLong).clamp(0, static_cast<int64_t>(table.size()) - 1);
      masks[b].copy_(lookup.index({index}).to(masks.scalar_type()));
    }
    targets.masks = masks;
  } else {
    keep_rows(targets.masks, kept, n);
  }
  keep_rows(targets.keypoints, kept, n);
  keep_rows(targets.rboxes, kept, n);
  targets.labels = labels.index_select(0, kept);
  return {dropped, largest};
}

}  // namespace trainer::loss
