// Horizontal and vertical flips of an image and its boxes (the reference's RandomFlip).
//
// Why: a flip must move boxes exactly with the pixels: x -> W - x swaps a box's left and right
// edges (x1' = W - x2, x2' = W - x1); likewise y for the vertical flip. Defaults: fliplr 0.5,
// flipud 0. The vertical draw comes first, as in the reference's transform order. Keypoints move
// with the pixels and then trade places by `flip_idx` (left wrist <-> right wrist), after either
// flip as in 8.4.190; an empty flip_idx leaves their order (the loader turns flips off for pose
// data without one).
#pragma once

#include <vector>

#include "data/augment/sample.h"
#include "data/augment/sample_rng.h"

namespace trainer::data::augment {

void flip_horizontal(Sample& sample, const std::vector<int>& flip_idx = {});
void flip_vertical(Sample& sample, const std::vector<int>& flip_idx = {});
// The labels' half of flip_horizontal (for a path that mirrors the pixels elsewhere); `width` is
// the image's.
void flip_horizontal_labels(Sample& sample, int width, const std::vector<int>& flip_idx = {});

// Each flip happens when its U[0, 1) draw is below its probability (a draw only when p > 0).
void random_flips(Sample& sample, double flipud, double fliplr, SampleRng& rng,
                  const std::vector<int>& flip_idx = {});

}  // namespace trainer::data::augment
