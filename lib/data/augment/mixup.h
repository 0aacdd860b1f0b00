// MixUp (off by default, mixup: 0.0): blend two augmented images, keep both label sets.
//
// Why: the reference blends img * r + img2 * (1 - r) with r ~ Beta(32, 32), truncating to uint8,
// and concatenates the labels; both images are already the same s x s size.
#pragma once

#include "data/augment/sample.h"

namespace trainer::data::augment {

Sample mixup(const Sample& a, const Sample& b, double r);

}  // namespace trainer::data::augment
