#include "loss/box_ops.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "loss/pair_ciou.h"

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
  const float* p_all = pd.data_ptr<float>();
  std::vector<BoxTerms> pd_terms(static_cast<size_t>(bs * na));
  for (int64_t i = 0; i < bs * na; ++i) pd_terms[static_cast<size_t>(i)] = box_terms(p_all + i * 4);
  const float* g_all = gt.data_ptr<float>();
  const bool* mask_all = mask.data_ptr<bool>();
  float* out_all = out.data_ptr<float>();
  at::parallel_for(0, bs * m, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / m;
      const float* g = g_all + row * 4;
      const BoxTerms gt_terms = box_terms(g);
      const bool* mk = mask_all + row * na;
      float* o = out_all + row * na;
      for (int64_t a = 0; a < na; ++a) {
        if (!mk[a]) continue;
        const int64_t i = b * na + a;
        o[a] = clamped_pair_ciou(g, gt_terms, p_all + i * 4, pd_terms[static_cast<size_t>(i)]);
      }
    }
  });
  return out;
}

}  // namespace trainer::loss
