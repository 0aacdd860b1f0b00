// Inference decoding: the end-to-end top-k (YOLO26, no NMS) and class-aware NMS (YOLO11 and the
// one-to-many head), reference-behaviour.md 4.2 "Inference" and 7.3.
//
// Why here and on the device: validation runs this on every batch; the NMS is exact greedy NMS
// (torchvision semantics: suppress when IoU > threshold; greedy_nms.h), batched over the images
// of a batch with a fixed number of device reads, without torchvision. It stops after max_det
// kept boxes, which gives the same first max_det boxes as full NMS followed by [:max_det].
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "model/greedy_nms.h"

namespace trainer::model {

struct PredictOptions {
  double conf = 0.001;        // keep scores > conf (val default; predict uses 0.25)
  double iou = 0.7;           // NMS IoU threshold
  int64_t max_det = 300;      // boxes kept per image
  bool multi_label = true;    // NMS: every (box, class) pair above conf is a candidate (val)
  bool agnostic = false;      // NMS across classes
  int64_t max_nms = 30000;    // candidates kept (by score) before NMS
  bool use_one2many = false;  // YOLO26: decode the one-to-many head with NMS instead of top-k
  // OBB: boxes are [cx, cy, w, h] with the angle as the last extra channel; NMS is the reference's
  // Fast-NMS on ProbIoU (rotated_nms) with the class offset added to the centre only.
  bool rotated = false;
};

// The reference's Fast-NMS for rotated boxes (TorchNMS.fast_nms with batch_probiou): boxes (N, 5)
// xywhr already in descending score order; box j is dropped when any earlier box, kept or not, has
// ProbIoU > iou_threshold with it. Indices of the kept boxes, at most max_keep (<= 0: no limit).
at::Tensor rotated_fast_nms(const at::Tensor& boxes, double iou_threshold, int64_t max_keep = 0);

// Class offset for class-aware NMS: boxes of class c are shifted by c * kMaxWh pixels.
constexpr double kMaxWh = 7680.0;

// End-to-end top-k. preds (B, A, 4 + nc + extra): xyxy pixels, scores, then `extra` per-anchor
// channels (pose keypoints). Takes the top min(max_det, A) anchors by their best class score, then
// the top min(max_det, A) (anchor, class) pairs among them: (B, K, 6 + extra) =
// [x1, y1, x2, y2, score, class, extra...], sorted by score, extra gathered at the chosen anchors.
at::Tensor topk_postprocess(const at::Tensor& preds, int64_t max_det, int64_t extra = 0);

// Rows of one image's top-k output (K, 6 + extra) whose score > conf, at most max_det.
at::Tensor filter_by_confidence(const at::Tensor& rows, double conf, int64_t max_det);

// Greedy NMS on one set of boxes (N, 4) xyxy with scores (N): indices of the kept boxes in
// descending score order (ties: lower index first), at most max_keep (<= 0: no limit).
at::Tensor nms(const at::Tensor& boxes, const at::Tensor& scores, double iou_threshold,
               int64_t max_keep = 0, NmsMethod method = NmsMethod::kAuto);

// NMS per image, batched. preds (B, 4 + nc + extra, A): xyxy pixels, scores, then `extra`
// per-anchor channels carried along with their box (pose keypoints; not scored, not suppressed on).
// Returns one (n_i, 6 + extra) tensor per image: [x1, y1, x2, y2, score, class, extra...], by
// descending score. Reads the device twice per batch (candidate counts, then the suppression
// bitmask), whatever the number of kept boxes; `method` is for tests (greedy_nms.h).
std::vector<at::Tensor> non_max_suppression(const at::Tensor& preds, const PredictOptions& options,
                                            int64_t extra = 0, NmsMethod method = NmsMethod::kAuto);

}  // namespace trainer::model
