// Tensor forms of ProbIoU and the rotated distance encoding; see rotated_box_ops.h.
#include "model/rotated_box_ops.h"

#include <ATen/ATen.h>

namespace trainer::model {
namespace {

struct Covariance {
  at::Tensor a, b, c;  // [[a, c], [c, b]]
};

Covariance covariance(const at::Tensor& boxes, double floor) {
  const at::Tensor w = boxes.select(-1, 2), h = boxes.select(-1, 3), angle = boxes.select(-1, 4);
  const at::Tensor a = w.pow(2) / 12 + floor, b = h.pow(2) / 12 + floor;
  const at::Tensor cos = angle.cos(), sin = angle.sin();
  const at::Tensor cos2 = cos.pow(2), sin2 = sin.pow(2);
  return {a * cos2 + b * sin2, a * sin2 + b * cos2, (a - b) * cos * sin};
}

// The reference's formula on broadcast-compatible operands.
at::Tensor probiou_of(const at::Tensor& x1, const at::Tensor& y1, const Covariance& c1,
                      const at::Tensor& x2, const at::Tensor& y2, const Covariance& c2,
                      double eps) {
  const at::Tensor sa = c1.a + c2.a, sb = c1.b + c2.b, sc = c1.c + c2.c;
  const at::Tensor s = sa * sb - sc.pow(2);
  const at::Tensor t1 = (sa * (y1 - y2).pow(2) + sb * (x1 - x2).pow(2)) / (s + eps) * 0.25;
  const at::Tensor t2 = (sc * (x2 - x1) * (y1 - y2)) / (s + eps) * 0.5;
  const at::Tensor det1 = (c1.a * c1.b - c1.c.pow(2)).clamp_min(0);
  const at::Tensor det2 = (c2.a * c2.b - c2.c.pow(2)).clamp_min(0);
  const at::Tensor t3 = (s / ((det1 * det2).sqrt() * 4 + eps) + eps).log() * 0.5;
  const at::Tensor bd = (t1 + t2 + t3).clamp(eps, 100.0);
  const at::Tensor hd = (1.0 - (-bd).exp() + eps).sqrt();
  return 1.0 - hd;
}

}  // namespace

at::Tensor probiou(const at::Tensor& box1, const at::Tensor& box2, double floor, double eps) {
  return probiou_of(box1.select(-1, 0), box1.select(-1, 1), covariance(box1, floor),
                    box2.select(-1, 0), box2.select(-1, 1), covariance(box2, floor), eps);
}

at::Tensor batch_probiou(const at::Tensor& box1, const at::Tensor& box2, double eps) {
  const at::Tensor a = box1.unsqueeze(1), b = box2.unsqueeze(0);  // (N, 1, 5), (1, M, 5)
  return probiou(a, b, 0.0, eps);
}

at::Tensor dist2rbox(const at::Tensor& distances, const at::Tensor& angle,
                     const at::Tensor& anchors) {
  const auto lt = distances.split(2, -1);
  const at::Tensor l = lt[0].select(-1, 0), t = lt[0].select(-1, 1);
  const at::Tensor r = lt[1].select(-1, 0), b = lt[1].select(-1, 1);
  const at::Tensor cos = angle.squeeze(-1).cos(), sin = angle.squeeze(-1).sin();
  const at::Tensor xf = (r - l) / 2, yf = (b - t) / 2;
  const at::Tensor x = xf * cos - yf * sin + anchors.select(-1, 0);
  const at::Tensor y = xf * sin + yf * cos + anchors.select(-1, 1);
  return at::stack({x, y, l + r, t + b}, -1);
}

at::Tensor rbox2dist(const at::Tensor& rboxes, const at::Tensor& anchors, int64_t reg_max) {
  const at::Tensor dx = rboxes.select(-1, 0) - anchors.select(-1, 0);
  const at::Tensor dy = rboxes.select(-1, 1) - anchors.select(-1, 1);
  const at::Tensor cos = rboxes.select(-1, 4).cos(), sin = rboxes.select(-1, 4).sin();
  const at::Tensor xf = dx * cos + dy * sin, yf = -dx * sin + dy * cos;
  const at::Tensor hw = rboxes.select(-1, 2) / 2, hh = rboxes.select(-1, 3) / 2;
  at::Tensor out = at::stack({hw - xf, hh - yf, hw + xf, hh + yf}, -1);
  if (reg_max > 1) out = out.clamp(0, static_cast<double>(reg_max) - 1 - 0.01);
  return out;
}

}  // namespace trainer::model
