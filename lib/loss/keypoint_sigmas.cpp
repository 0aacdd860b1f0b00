// Tested by tests/loss/test_keypoint_loss.cpp: default_keypoint_sigmas (dataset, COCO 17x3, 1/K,
//   invalid), rle_keypoint_weights.
#include "loss/keypoint_sigmas.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace trainer::loss {

namespace {
bool is_coco_shape(int64_t k, int64_t ndim) {
  return k == 17 && ndim == 3;
}
}  // namespace

const std::vector<double>& coco_keypoint_sigmas() {
  // pycocotools' values: 0.26, 0.25, ... / 10.
  static const std::vector<double> sigmas = {0.026, 0.025, 0.025, 0.035, 0.035, 0.079,
                                             0.079, 0.072, 0.072, 0.062, 0.062, 0.107,
                                             0.107, 0.087, 0.087, 0.089, 0.089};
  return sigmas;
}

std::vector<double> default_keypoint_sigmas(int64_t num_keypoints, int64_t keypoint_dim,
                                            const std::vector<double>& override_sigmas) {
  if (num_keypoints < 1) throw std::invalid_argument("pose loss: the keypoint count must be >= 1");
  if (!override_sigmas.empty()) {
    bool positive = true;
    for (double s : override_sigmas) positive = positive && s > 0;
    if (static_cast<int64_t>(override_sigmas.size()) != num_keypoints || !positive) {
      std::ostringstream msg;
      msg << "pose loss: kpt_oks_sigmas must be " << num_keypoints << " positive values, got [";
      for (size_t i = 0; i < override_sigmas.size(); ++i)
        msg << (i ? ", " : "") << override_sigmas[i];
      msg << "]";
      throw std::invalid_argument(msg.str());
    }
    return override_sigmas;
  }
  if (is_coco_shape(num_keypoints, keypoint_dim)) return coco_keypoint_sigmas();
  return std::vector<double>(static_cast<size_t>(num_keypoints),
                             1.0 / static_cast<double>(num_keypoints));
}

std::vector<double> rle_keypoint_weights(int64_t num_keypoints, int64_t keypoint_dim) {
  if (!is_coco_shape(num_keypoints, keypoint_dim))
    return std::vector<double>(static_cast<size_t>(std::max<int64_t>(num_keypoints, 0)), 1.0);
  return {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.2, 1.2, 1.5, 1.5, 1.0, 1.0, 1.2, 1.2, 1.5, 1.5};
}

}  // namespace trainer::loss
