// Per-keypoint constants of the pose losses: the OKS sigmas (keypoint loss, pose assigner) and the
// RLE weights of YOLO26's residual log-likelihood loss.
//
// Why one place: the reference picks them by the same rule in the loss, the assigner and the
// validator (a dataset's kpt_oks_sigmas, else COCO's for the 17-keypoint [17, 3] shape, else 1/K),
// and a mismatch would silently change which anchors learn which person.
#pragma once

#include <cstdint>
#include <vector>

namespace trainer::loss {

// The COCO-17 OKS sigmas (nose, eyes, ears, shoulders, elbows, wrists, hips, knees, ankles).
const std::vector<double>& coco_keypoint_sigmas();

// `override_sigmas` if non-empty (must be K positive values, else std::invalid_argument naming
// them); otherwise COCO's for K = 17 with ndim = 3; otherwise 1/K for every keypoint.
std::vector<double> default_keypoint_sigmas(int64_t num_keypoints, int64_t keypoint_dim,
                                            const std::vector<double>& override_sigmas = {});

// The RLE loss weight per keypoint: COCO's (1.2 on elbows and knees, 1.5 on wrists and ankles) for
// K = 17 with ndim = 3, else 1 for every keypoint.
std::vector<double> rle_keypoint_weights(int64_t num_keypoints, int64_t keypoint_dim);

}  // namespace trainer::loss
