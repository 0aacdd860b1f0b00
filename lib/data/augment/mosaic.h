// 4-image mosaic: four images around a random centre on a 2s x 2s canvas filled with 114.
//
// Why: the reference's main augmentation; its placement arithmetic (which part of each image lands
// where, and the label offsets) is a pure function of the centre, tested for a fixed centre.
// Quadrants: 0 puts the image's bottom-right corner at (xc, yc), 1 its bottom-left, 2 its
// top-right, 3 its top-left; each is cropped to the canvas. Labels are shifted by (padw, padh),
// clipped to [0, 2s] and zero-area boxes dropped. The centre is int(U(s/2, 3s/2)), y drawn first.
#pragma once

#include <array>

#include "data/augment/sample.h"
#include "data/augment/sample_rng.h"

namespace trainer::data::augment {

struct MosaicPlacement {
  int x1a, y1a, x2a, y2a;  // destination on the canvas
  int x1b, y1b, x2b, y2b;  // source rectangle in the image
  int padw, padh;          // label offset: x1a - x1b, y1a - y1b
};

MosaicPlacement mosaic_placement(int quadrant, int xc, int yc, int height, int width, int s);

// Builds the mosaic of `parts` (quadrant order) for a fixed centre.
Sample mosaic4(const std::array<const Sample*, 4>& parts, int s, int xc, int yc);

// mosaic4 with pixels only inside `region` of the canvas: the rest of `canvas` (2s x 2s, reused
// between calls, reallocated when its size differs) keeps whatever it held. The labels are
// mosaic4's. With the region a warp reads (warp_source_region) the warped result is mosaic4's,
// pixel for pixel, for a fraction of the filling and copying.
Sample mosaic4_into(const std::array<const Sample*, 4>& parts, int s, int xc, int yc,
                    const cv::Rect& region, cv::Mat& canvas);

// Draws the centre (yc then xc) from `rng`, then mosaic4.
Sample random_mosaic4(const std::array<const Sample*, 4>& parts, int s, SampleRng& rng);

}  // namespace trainer::data::augment
