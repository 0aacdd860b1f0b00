// Box bookkeeping shared by the augmentations; see sample.h.
#include "data/augment/sample.h"

#include <algorithm>

namespace trainer::data::augment {

void keep_boxes(Sample& sample, const std::vector<bool>& keep) {
  size_t out = 0;
  for (size_t i = 0; i < sample.boxes.size(); ++i) {
    if (!keep[i]) continue;
    sample.boxes[out] = sample.boxes[i];
    sample.classes[out] = sample.classes[i];
    ++out;
  }
  sample.boxes.resize(out);
  sample.classes.resize(out);
}

void clip_boxes(Sample& sample, float width, float height) {
  for (auto& b : sample.boxes) {
    b[0] = std::clamp(b[0], 0.0f, width);
    b[1] = std::clamp(b[1], 0.0f, height);
    b[2] = std::clamp(b[2], 0.0f, width);
    b[3] = std::clamp(b[3], 0.0f, height);
  }
}

}  // namespace trainer::data::augment
