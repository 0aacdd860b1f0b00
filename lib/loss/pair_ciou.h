// The CIoU of one (GT, predicted) pair of xyxy boxes in plain float arithmetic, for the CPU's
// fused passes over candidate pairs (box_ops.cpp, dense_assigner_cpu.cpp).
//
// Why a header of its own: both fused passes must give the same bits as bbox_iou's element-wise
// form (the tests compare them), so the order of every operation lives in one place. The terms of
// one box alone (width, height + eps, the aspect atan) are computed once per box by the callers.
#pragma once

#include <algorithm>
#include <cmath>

namespace trainer::loss {

// A box's terms as bbox_iou computes them: width, height + eps, atan(width / height).
struct BoxTerms {
  float w, h, atan_wh;
};

inline BoxTerms box_terms(const float* box) {
  constexpr float kEps = 1e-7f;
  const float w = box[2] - box[0];
  const float h = (box[3] - box[1]) + kEps;
  return {w, h, std::atan(w / h)};
}

// max(CIoU(g, p), 0) with bbox_iou's eps (1e-7) and order of operations.
inline float clamped_pair_ciou(const float* g, const BoxTerms& gt, const float* p,
                               const BoxTerms& pd) {
  constexpr float kEps = 1e-7f;
  const float k = static_cast<float>(4.0 / (M_PI * M_PI));
  const float one_eps = static_cast<float>(1.0 + 1e-7);
  const float iw = std::max(std::min(g[2], p[2]) - std::max(g[0], p[0]), 0.0f);
  const float ih = std::max(std::min(g[3], p[3]) - std::max(g[1], p[1]), 0.0f);
  const float inter = iw * ih;
  const float union_area = ((gt.w * gt.h + pd.w * pd.h) - inter) + kEps;
  const float iou = inter / union_area;
  const float cw = std::max(g[2], p[2]) - std::min(g[0], p[0]);
  const float ch = std::max(g[3], p[3]) - std::min(g[1], p[1]);
  const float c2 = (cw * cw + ch * ch) + kEps;
  const float dx = ((p[0] + p[2]) - g[0]) - g[2];
  const float dy = ((p[1] + p[3]) - g[1]) - g[3];
  const float rho2 = (dx * dx + dy * dy) / 4.0f;
  const float d = pd.atan_wh - gt.atan_wh;
  const float v = k * (d * d);
  const float alpha = v / ((v - iou) + one_eps);
  const float ciou = iou - (rho2 / c2 + v * alpha);
  return std::max(ciou, 0.0f);
}

}  // namespace trainer::loss
