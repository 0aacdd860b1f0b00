// Horizontal and vertical flips of an image and its boxes (the reference's RandomFlip).
//
// Why: a flip must move boxes exactly with the pixels: x -> W - x swaps a box's left and right
// edges (x1' = W - x2, x2' = W - x1); likewise y for the vertical flip. Defaults: fliplr 0.5,
// flipud 0. The vertical draw comes first, as in the reference's transform order.
#pragma once

#include "data/augment/sample.h"
#include "data/augment/sample_rng.h"

namespace trainer::data::augment {

void flip_horizontal(Sample& sample);
void flip_vertical(Sample& sample);

// Each flip happens when its U[0, 1) draw is below its probability (a draw only when p > 0).
void random_flips(Sample& sample, double flipud, double fliplr, SampleRng& rng);

}  // namespace trainer::data::augment
