// The keypoints a pose head predicts per object: how many, and the values per keypoint (2: x, y;
// 3: x, y, visibility), the reference's kpt_shape [K, ndim].
//
// Why its own header: the builder, the loss and the data pipeline all pass it around; none of
// them should need the model's building blocks for it.
#pragma once

#include <cstdint>

namespace trainer::model {

struct KeypointShape {
  int64_t count = 17;  // K
  int64_t dims = 3;    // ndim

  constexpr int64_t channels() const { return count * dims; }  // nk = K * ndim
};

// What a detection model (no keypoints) reports.
inline constexpr KeypointShape kNoKeypoints{0, 3};

}  // namespace trainer::model
