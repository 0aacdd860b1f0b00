// Keypoint similarity as the reference trainer's pose metric computes it (8.4.190 `kpt_iou`). The
// sigmas come from the caller (the rule that picks them: loss/keypoint_sigmas.h).
//
// Why beside the box metric: the pose validator scores each prediction twice, by box IoU and by
// this OKS, through the same matching (reference_metric.h); unlike the COCO protocol's OKS
// (coco_match.h) it takes the area as GT box width x height x 0.53 and ignores predicted
// visibility.
#pragma once

#include <cstddef>
#include <vector>

namespace trainer::eval {

// The OKS matrix [gt][pred] (m x n) in float32 as the reference computes it:
//   sum_k exp(-d_k / ((2 sigma_k)^2 (area + 1e-7) 2)) [v_k != 0] / (sum_k [v_k != 0] + 1e-7)
// gt: m x K x 3 (x, y, v), pred: n x K x pred_dims (x, y[, v]), pixels; areas: m values (the
// caller's area, the reference passes box w x h x 0.53).
std::vector<float> reference_keypoint_oks(const std::vector<float>& gt,
                                          const std::vector<float>& pred,
                                          const std::vector<float>& areas, size_t count,
                                          size_t pred_dims, const std::vector<double>& sigmas);

// The reference's area factor for keypoint OKS in validation (from xtcocotools).
constexpr float kKeypointAreaFactor = 0.53f;

}  // namespace trainer::eval
