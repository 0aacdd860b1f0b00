// See greedy_nms.h.
// Tested by tests/model/test_postprocess.cpp: greedy_nms_sorted host-scan and bitmask equal
//   plain-loop oracle, ties by index; suppression_bitmask bit layout.
#include "model/greedy_nms.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace trainer::model {
namespace {

// The tensor ops' float semantics: maximum/minimum/clamp propagate NaN.
float nan_max(float a, float b) {
  return (std::isnan(a) || std::isnan(b)) ? std::numeric_limits<float>::quiet_NaN()
                                          : (a > b ? a : b);
}
float nan_min(float a, float b) {
  return (std::isnan(a) || std::isnan(b)) ? std::numeric_limits<float>::quiet_NaN()
                                          : (a < b ? a : b);
}
float clamp_min0(float v) {
  return (std::isnan(v) || v >= 0.0f) ? v : 0.0f;
}

// IoU exactly as the tensor expression: inter / (area_j + area_i - inter), each step in float.
bool suppresses(const float* i, float area_i, const float* j, float area_j, float threshold) {
  const float w = clamp_min0(nan_min(j[2], i[2]) - nan_max(j[0], i[0]));
  const float h = clamp_min0(nan_min(j[3], i[3]) - nan_max(j[1], i[1]));
  const float inter = w * h;
  const float iou = inter / (area_j + area_i - inter);
  return iou > threshold;
}

std::vector<std::vector<int64_t>> host_scan(const at::Tensor& boxes,
                                            const std::vector<int64_t>& counts, float threshold,
                                            int64_t max_keep) {
  const at::Tensor host = boxes.to(torch::kCPU, torch::kFloat).contiguous();
  const int64_t n = host.size(1);
  std::vector<std::vector<int64_t>> out(counts.size());
  std::vector<float> area;
  std::vector<int64_t> kept;
  for (size_t b = 0; b < counts.size(); ++b) {
    const float* p = host.data_ptr<float>() + static_cast<int64_t>(b) * n * 4;
    area.resize(static_cast<size_t>(counts[b]));
    for (int64_t i = 0; i < counts[b]; ++i) {
      const float* q = p + 4 * i;
      area[static_cast<size_t>(i)] = (q[2] - q[0]) * (q[3] - q[1]);
    }
    kept.clear();
    for (int64_t j = 0; j < counts[b]; ++j) {
      bool removed = false;
      for (int64_t i : kept) {
        if (suppresses(p + 4 * i, area[static_cast<size_t>(i)], p + 4 * j,
                       area[static_cast<size_t>(j)], threshold)) {
          removed = true;
          break;
        }
      }
      if (removed) continue;
      kept.push_back(j);
      if (max_keep > 0 && static_cast<int64_t>(kept.size()) >= max_keep) break;
    }
    out[b] = kept;
  }
  return out;
}

// Images per bitmask copy: the whole batch unless its mask would pass 1 GiB (N near max_nms).
constexpr int64_t kMaskBytesPerCopy = int64_t{1} << 30;
// Float temporaries of one row tile of the IoU computation.
constexpr int64_t kTileBytes = int64_t{256} << 20;

}  // namespace

at::Tensor suppression_bitmask(const at::Tensor& boxes, double iou_threshold) {
  const int64_t batch = boxes.size(0), n = boxes.size(1);
  const int64_t words = (n + 7) / 8, padded_n = words * 8;
  at::Tensor b = boxes.to(torch::kFloat);
  if (padded_n != n) b = torch::cat({b, torch::zeros({batch, padded_n - n, 4}, b.options())}, 1);
  const at::Tensor x1 = b.select(2, 0), y1 = b.select(2, 1), x2 = b.select(2, 2),
                   y2 = b.select(2, 3);
  const at::Tensor area = (x2 - x1) * (y2 - y1);
  // The bit weights 1, 2, 4, ..., 128 made by kernels on b's device: torch::tensor({...}) on a
  // GPU would fill on the host and copy with a blocking sync, once per batch.
  const at::Tensor weights =
      torch::pow(2, torch::arange(8, b.options().dtype(torch::kLong))).to(torch::kByte);
  at::Tensor out = torch::empty({batch, n, words}, b.options().dtype(torch::kByte));
  // ~6 float temporaries of (batch, rows, padded_n) per tile.
  const int64_t rows =
      std::max<int64_t>(1, kTileBytes / (6 * 4 * std::max<int64_t>(1, batch * padded_n)));
  auto cols = [](const at::Tensor& t) { return t.unsqueeze(1); };  // (B, 1, Np)
  for (int64_t r0 = 0; r0 < n; r0 += rows) {
    const int64_t r = std::min(rows, n - r0);
    auto row = [&](const at::Tensor& t) { return t.narrow(1, r0, r).unsqueeze(2); };  // (B, r, 1)
    const at::Tensor ix1 = torch::maximum(cols(x1), row(x1));
    const at::Tensor iy1 = torch::maximum(cols(y1), row(y1));
    const at::Tensor ix2 = torch::minimum(cols(x2), row(x2));
    const at::Tensor iy2 = torch::minimum(cols(y2), row(y2));
    const at::Tensor inter = (ix2 - ix1).clamp_min(0) * (iy2 - iy1).clamp_min(0);
    const at::Tensor iou = inter / (cols(area) + row(area) - inter);
    const at::Tensor bits = iou.gt(iou_threshold).view({batch, r, words, 8}).to(torch::kByte);
    out.narrow(1, r0, r).copy_((bits * weights).sum(-1, /*keepdim=*/false, torch::kByte));
  }
  return out;
}

std::vector<std::vector<int64_t>> greedy_nms_sorted(const at::Tensor& boxes,
                                                    const std::vector<int64_t>& counts,
                                                    double iou_threshold, int64_t max_keep,
                                                    NmsMethod method) {
  // The tensor path compares a float IoU with the threshold converted to float.
  const auto threshold = static_cast<float>(iou_threshold);
  if (method == NmsMethod::kAuto) {
    method = boxes.device().is_cpu() ? NmsMethod::kHostScan : NmsMethod::kBitmask;
  }
  const int64_t n = boxes.size(1);
  if (method == NmsMethod::kHostScan || n == 0) {
    return host_scan(boxes, counts, threshold, max_keep);
  }
  const int64_t batch = boxes.size(0), words = (n + 7) / 8;
  const int64_t per_copy =
      std::max<int64_t>(1, kMaskBytesPerCopy / std::max<int64_t>(1, n * words));
  std::vector<std::vector<int64_t>> out(counts.size());
  std::vector<uint8_t> removed(static_cast<size_t>(words));
  for (int64_t b0 = 0; b0 < batch; b0 += per_copy) {
    const int64_t group = std::min(per_copy, batch - b0);
    const at::Tensor mask =
        suppression_bitmask(boxes.narrow(0, b0, group), iou_threshold).to(torch::kCPU).contiguous();
    for (int64_t g = 0; g < group; ++g) {
      const uint8_t* m = mask.data_ptr<uint8_t>() + g * n * words;
      std::fill(removed.begin(), removed.end(), uint8_t{0});
      auto& kept = out[static_cast<size_t>(b0 + g)];
      for (int64_t i = 0; i < counts[static_cast<size_t>(b0 + g)]; ++i) {
        if ((removed[static_cast<size_t>(i >> 3)] >> (i & 7)) & 1) continue;
        kept.push_back(i);
        if (max_keep > 0 && static_cast<int64_t>(kept.size()) >= max_keep) break;
        const uint8_t* row = m + i * words;
        for (int64_t w = 0; w < words; ++w) removed[static_cast<size_t>(w)] |= row[w];
      }
    }
  }
  return out;
}

}  // namespace trainer::model
