// MixUp; see mixup.h.
// Tested by tests/data/test_augment.cpp: mixup blend truncates and labels concatenate.
#include "data/augment/mixup.h"

#include <stdexcept>

namespace trainer::data::augment {

Sample mixup(const Sample& a, const Sample& b, double r) {
  if (a.image.size() != b.image.size()) throw std::invalid_argument("mixup: image sizes differ");
  Sample out;
  out.image.create(a.image.size(), CV_8UC3);
  const size_t n = a.image.total() * 3;
  const uint8_t* pa = a.image.isContinuous() ? a.image.ptr<uint8_t>() : nullptr;
  cv::Mat ca = pa ? a.image : a.image.clone();
  cv::Mat cb = b.image.isContinuous() ? b.image : b.image.clone();
  const uint8_t* x = ca.ptr<uint8_t>();
  const uint8_t* y = cb.ptr<uint8_t>();
  uint8_t* o = out.image.ptr<uint8_t>();
  for (size_t i = 0; i < n; ++i) o[i] = static_cast<uint8_t>(x[i] * r + y[i] * (1.0 - r));
  out.keypoints_per_box = a.keypoints_per_box;
  out.oriented = a.oriented;
  append_instances(out, a);
  append_instances(out, b);
  return out;
}

}  // namespace trainer::data::augment
