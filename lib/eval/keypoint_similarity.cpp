// See keypoint_similarity.h.
#include "eval/keypoint_similarity.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace trainer::eval {

std::vector<float> reference_keypoint_oks(const std::vector<float>& gt,
                                          const std::vector<float>& pred,
                                          const std::vector<float>& areas, size_t count,
                                          size_t pred_dims, const std::vector<double>& sigmas) {
  const size_t m = areas.size();
  if (count == 0 || pred_dims < 2 || sigmas.size() != count || gt.size() != m * count * 3 ||
      pred.size() % (count * pred_dims) != 0) {
    throw std::invalid_argument("reference_keypoint_oks: inconsistent sizes");
  }
  const size_t n = pred.size() / (count * pred_dims);
  // torch: sigma as a float32 tensor, (2 sigma)^2 * (area + eps) * 2 evaluated left to right.
  std::vector<float> scale(count);
  for (size_t k = 0; k < count; ++k) {
    const float two_sigma = 2.0f * static_cast<float>(sigmas[k]);
    scale[k] = two_sigma * two_sigma;
  }
  std::vector<float> out(m * n, 0.0f);
  for (size_t g = 0; g < m; ++g) {
    const float* gk = gt.data() + g * count * 3;
    float visible = 0.0f;
    for (size_t k = 0; k < count; ++k) visible += gk[3 * k + 2] != 0.0f ? 1.0f : 0.0f;
    const float area = areas[g] + 1e-7f;
    for (size_t p = 0; p < n; ++p) {
      const float* pk = pred.data() + p * count * pred_dims;
      float sum = 0.0f;
      for (size_t k = 0; k < count; ++k) {
        if (gk[3 * k + 2] == 0.0f) continue;
        const float dx = gk[3 * k] - pk[pred_dims * k];
        const float dy = gk[3 * k + 1] - pk[pred_dims * k + 1];
        const float d = dx * dx + dy * dy;
        const float e = d / (scale[k] * area * 2.0f);
        sum += std::exp(-e);
      }
      out[g * n + p] = sum / (visible + 1e-7f);
    }
  }
  return out;
}

}  // namespace trainer::eval
