// Box conversions and the IoU family (IoU, GIoU, DIoU, CIoU) with the reference's eps placement.
//
// Why: the assigner and the box loss both rank and weigh boxes by CIoU, so tiny differences (where
// eps enters, which term has no gradient) change assignments and the loss value. These follow the
// reference's `bbox_iou` rules exactly, so our numbers can be compared with it.
#pragma once

#include <ATen/core/Tensor.h>

namespace trainer::loss {

// (..., 4) [cx, cy, w, h] -> [x1, y1, x2, y2] and back.
at::Tensor xywh_to_xyxy(const at::Tensor& boxes);
at::Tensor xyxy_to_xywh(const at::Tensor& boxes);

enum class IouKind { kIou, kGiou, kDiou, kCiou };

// Element-wise (broadcasting) IoU of box1 and box2, (..., 4) each, returning (..., 1).
// xyxy: the boxes are [x1, y1, x2, y2] and eps is added to the heights (h = y2 - y1 + eps);
// otherwise they are [cx, cy, w, h] used as given. With eps = 1e-7 (the reference):
//   IoU  = inter / (w1 h1 + w2 h2 - inter + eps)
//   GIoU = IoU - (C - union) / C,            C = enclosing area + eps
//   DIoU = IoU - rho2 / c2,                  c2 = enclosing diagonal^2 + eps,
//                                            rho2 = squared centre distance
//   CIoU = DIoU - v alpha,                   v = 4/pi^2 (atan(w2/h2) - atan(w1/h1))^2,
//                                            alpha = v / (v - IoU + 1 + eps), without gradient
at::Tensor bbox_iou(const at::Tensor& box1, const at::Tensor& box2, IouKind kind, bool xyxy = true,
                    double eps = 1e-7);

// The static assigner's overlaps on the CPU: for gt (B, M, 4) and predicted (B, A, 4) xyxy boxes,
// (B, M, A) with bbox_iou(gt, predicted, kCiou) clamped at 0 where pair_mask (B, M, A) is true and
// 0 elsewhere, in one fused pass that computes only the masked pairs (the element-wise ATen form
// makes ~40 full (B, M, A) temporaries, most of the static step's extra cost on a CPU). Follows
// bbox_iou's float operations in order; the aspect atan comes from the C library, which may
// differ from ATen's vectorised one in the last bit. fp32 CPU tensors only.
at::Tensor masked_pair_ciou_cpu(const at::Tensor& gt_bboxes, const at::Tensor& pd_bboxes,
                                const at::Tensor& pair_mask);

}  // namespace trainer::loss
