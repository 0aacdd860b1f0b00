#include "loss/box_ops.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

namespace trainer::loss {

at::Tensor xywh_to_xyxy(const at::Tensor& boxes) {
  const auto xy = boxes.narrow(-1, 0, 2);
  const auto half_wh = boxes.narrow(-1, 2, 2) / 2;
  return at::cat({xy - half_wh, xy + half_wh}, -1);
}

at::Tensor xyxy_to_xywh(const at::Tensor& boxes) {
  const auto x1y1 = boxes.narrow(-1, 0, 2);
  const auto x2y2 = boxes.narrow(-1, 2, 2);
  return at::cat({(x1y1 + x2y2) / 2, x2y2 - x1y1}, -1);
}

at::Tensor bbox_iou(const at::Tensor& box1, const at::Tensor& box2, IouKind kind, bool xyxy,
                    double eps) {
  at::Tensor b1x1, b1y1, b1x2, b1y2, b2x1, b2y1, b2x2, b2y2, w1, h1, w2, h2;
  if (xyxy) {
    auto c1 = box1.chunk(4, -1);
    auto c2 = box2.chunk(4, -1);
    b1x1 = c1[0], b1y1 = c1[1], b1x2 = c1[2], b1y2 = c1[3];
    b2x1 = c2[0], b2y1 = c2[1], b2x2 = c2[2], b2y2 = c2[3];
    w1 = b1x2 - b1x1, h1 = b1y2 - b1y1 + eps;
    w2 = b2x2 - b2x1, h2 = b2y2 - b2y1 + eps;
  } else {
    auto c1 = box1.chunk(4, -1);
    auto c2 = box2.chunk(4, -1);
    w1 = c1[2], h1 = c1[3], w2 = c2[2], h2 = c2[3];
    b1x1 = c1[0] - w1 / 2, b1x2 = c1[0] + w1 / 2, b1y1 = c1[1] - h1 / 2, b1y2 = c1[1] + h1 / 2;
    b2x1 = c2[0] - w2 / 2, b2x2 = c2[0] + w2 / 2, b2y1 = c2[1] - h2 / 2, b2y2 = c2[1] + h2 / 2;
  }
  const auto inter = (at::minimum(b1x2, b2x2) - at::maximum(b1x1, b2x1)).clamp_min(0) *
                     (at::minimum(b1y2, b2y2) - at::maximum(b1y1, b2y1)).clamp_min(0);
  const auto union_area = w1 * h1 + w2 * h2 - inter + eps;
  const auto iou = inter / union_area;
  if (kind == IouKind::kIou) return iou;

  const auto cw = at::maximum(b1x2, b2x2) - at::minimum(b1x1, b2x1);  // enclosing width
  const auto ch = at::maximum(b1y2, b2y2) - at::minimum(b1y1, b2y1);  // enclosing height
  if (kind == IouKind::kGiou) {
    const auto c_area = cw * ch + eps;
    return iou - (c_area - union_area) / c_area;
  }
  const auto c2 = cw.pow(2) + ch.pow(2) + eps;
  const auto rho2 = ((b2x1 + b2x2 - b1x1 - b1x2).pow(2) + (b2y1 + b2y2 - b1y1 - b1y2).pow(2)) / 4;
  if (kind == IouKind::kDiou) return iou - rho2 / c2;

  const double k = 4.0 / (M_PI * M_PI);
  const auto v = k * (at::atan(w2 / h2) - at::atan(w1 / h1)).pow(2);
  at::Tensor alpha;
  {
    at::NoGradGuard no_grad;
    alpha = v / (v - iou + (1 + eps));
  }
  return iou - (rho2 / c2 + v * alpha);
}

at::Tensor masked_pair_ciou_cpu(const at::Tensor& gt_bboxes, const at::Tensor& pd_bboxes,
                                const at::Tensor& pair_mask) {
  TORCH_CHECK(gt_bboxes.device().is_cpu() && gt_bboxes.scalar_type() == at::kFloat &&
                  pd_bboxes.scalar_type() == at::kFloat,
              "masked_pair_ciou_cpu: fp32 CPU boxes");
  const int64_t bs = gt_bboxes.size(0), m = gt_bboxes.size(1), na = pd_bboxes.size(1);
  const auto gt = gt_bboxes.contiguous();
  const auto pd = pd_bboxes.contiguous();
  const auto mask = pair_mask.to(at::kBool).contiguous();
  auto out = at::zeros({bs, m, na}, gt.options());
  const float eps = 1e-7f;
  const auto k = static_cast<float>(4.0 / (M_PI * M_PI));
  const float one_eps = static_cast<float>(1.0 + 1e-7);
  // Per predicted box: width, height (+ eps) and the aspect atan, as bbox_iou computes them.
  auto pd_terms = at::empty({bs, na, 3}, gt.options());
  {
    const float* p = pd.data_ptr<float>();
    float* t = pd_terms.data_ptr<float>();
    for (int64_t i = 0; i < bs * na; ++i, p += 4, t += 3) {
      t[0] = p[2] - p[0];
      t[1] = (p[3] - p[1]) + eps;
      t[2] = std::atan(t[0] / t[1]);
    }
  }
  const float* g_all = gt.data_ptr<float>();
  const float* p_all = pd.data_ptr<float>();
  const float* pt_all = pd_terms.data_ptr<float>();
  const bool* mask_all = mask.data_ptr<bool>();
  float* out_all = out.data_ptr<float>();
  at::parallel_for(0, bs * m, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / m;
      const float* g = g_all + row * 4;
      const float w1 = g[2] - g[0], h1 = (g[3] - g[1]) + eps;
      const float atan1 = std::atan(w1 / h1);
      const bool* mk = mask_all + row * na;
      float* o = out_all + row * na;
      for (int64_t a = 0; a < na; ++a) {
        if (!mk[a]) continue;
        const float* p = p_all + (b * na + a) * 4;
        const float* pt = pt_all + (b * na + a) * 3;
        const float w2 = pt[0], h2 = pt[1];
        const float iw = std::max(std::min(g[2], p[2]) - std::max(g[0], p[0]), 0.0f);
        const float ih = std::max(std::min(g[3], p[3]) - std::max(g[1], p[1]), 0.0f);
        const float inter = iw * ih;
        const float union_area = ((w1 * h1 + w2 * h2) - inter) + eps;
        const float iou = inter / union_area;
        const float cw = std::max(g[2], p[2]) - std::min(g[0], p[0]);
        const float ch = std::max(g[3], p[3]) - std::min(g[1], p[1]);
        const float c2 = (cw * cw + ch * ch) + eps;
        const float dx = ((p[0] + p[2]) - g[0]) - g[2];
        const float dy = ((p[1] + p[3]) - g[1]) - g[3];
        const float rho2 = (dx * dx + dy * dy) / 4.0f;
        const float d = pt[2] - atan1;
        const float v = k * (d * d);
        const float alpha = v / ((v - iou) + one_eps);
        const float ciou = iou - (rho2 / c2 + v * alpha);
        o[a] = std::max(ciou, 0.0f);
      }
    }
  });
  return out;
}

}  // namespace trainer::loss
