// Letterbox: resize an image to fit a target shape keeping its aspect ratio, pad the rest with 114.
//
// Why: training without mosaic feeds RandomPerspective a letterboxed imgsz x imgsz image, and
// validation letterboxes each image to its rect batch shape; the evaluator maps predictions back
// with the inverse. The geometry is a pure function so both directions are tested by hand.
// Reference rules (LetterBox): r = min(out_h / h, out_w / w), not above 1 unless scaleup; unpadded
// size round(w r) x round(h r) (Python rounding, half to even); padding split in two with
// top = round(dh - 0.1), bottom = round(dh + 0.1) (same for left/right); colour 114; INTER_LINEAR.
#pragma once

#include <array>

#include "data/augment/sample.h"

namespace trainer::data::augment {

struct LetterboxGeometry {
  double ratio = 1.0;     // applied to box coordinates
  int resized_width = 0;  // unpadded image size after the resize
  int resized_height = 0;
  int top = 0, bottom = 0, left = 0, right = 0;
  int out_width = 0, out_height = 0;
};

LetterboxGeometry letterbox_geometry(int height, int width, int out_height, int out_width,
                                     bool scaleup);

// The reference predictor's LetterBox(size, auto=True, stride): scaled up or down to fit size x
// size (each side at least 1 px), then padded only up to the next multiple of `stride` on each
// axis (the minimum rectangle), split in two as above.
LetterboxGeometry minimal_letterbox_geometry(int height, int width, int size, int stride);

// Resizes and pads `sample` (boxes scaled by the ratio and shifted by left/top).
Sample letterbox(const Sample& sample, const LetterboxGeometry& geometry);

// Maps a box in letterboxed pixels back to the pre-letterbox image of size width x height:
// (x - left) / ratio, (y - top) / ratio, clipped to the image.
PixelBox letterbox_inverse(const PixelBox& box, const LetterboxGeometry& geometry, int width,
                           int height);

// Python's round(): to the nearest integer, halves to even.
int round_half_even(double value);

}  // namespace trainer::data::augment
