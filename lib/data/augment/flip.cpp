// Flips; see flip.h.
#include "data/augment/flip.h"

namespace trainer::data::augment {

void flip_horizontal(Sample& sample) {
  cv::flip(sample.image, sample.image, 1);
  const float w = static_cast<float>(sample.width());
  for (auto& b : sample.boxes) {
    const float x1 = w - b[2];
    const float x2 = w - b[0];
    b[0] = x1;
    b[2] = x2;
  }
}

void flip_vertical(Sample& sample) {
  cv::flip(sample.image, sample.image, 0);
  const float h = static_cast<float>(sample.height());
  for (auto& b : sample.boxes) {
    const float y1 = h - b[3];
    const float y2 = h - b[1];
    b[1] = y1;
    b[3] = y2;
  }
}

void random_flips(Sample& sample, double flipud, double fliplr, SampleRng& rng) {
  if (flipud > 0.0 && rng.uniform() < flipud) flip_vertical(sample);
  if (fliplr > 0.0 && rng.uniform() < fliplr) flip_horizontal(sample);
}

}  // namespace trainer::data::augment
