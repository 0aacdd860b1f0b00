// Random perspective / affine warp and the box-candidate filter (the reference's
// RandomPerspective).
//
// Why: after mosaic (or letterbox) every training image is rotated, scaled, sheared, translated
// and optionally given perspective, then boxes that the warp squashed or pushed out are dropped.
// The matrix M = T * S * R * P * C: C moves the input centre to the origin, P has perspective
// entries U(-p, p), R rotates by U(-deg, deg) degrees and scales by U(1 - scale, 1 + scale)
// (cv::getRotationMatrix2D about the origin), S shears by tan(U(-shear, shear) degrees) in x then
// y, T translates to U(0.5 - translate, 0.5 + translate) times the output size. The output is the
// input grown by 2 * border on each axis (border = -s/2 after mosaic gives s x s), fill 114.
// Boxes: the 4 corners are transformed, min/max taken, clipped to the output.
#pragma once

#include <opencv2/core.hpp>

#include <array>

#include "data/augment/sample.h"
#include "data/augment/sample_rng.h"

namespace trainer::data::augment {

struct AffineParams {
  double degrees = 0.0;
  double translate = 0.1;
  double scale = 0.5;
  double shear = 0.0;
  double perspective = 0.0;
};

struct AffineDraw {
  cv::Matx33d matrix;
  double scale = 1.0;  // the isotropic scale in R (box1 for the candidate filter is scaled by it)
};

// Draws M for an input of in_w x in_h and an output of out_w x out_h.
AffineDraw random_affine_matrix(int in_width, int in_height, int out_width, int out_height,
                                const AffineParams& params, SampleRng& rng);

// Transforms a box's 4 corners by M (dividing by z when `perspective`), takes the enclosing
// box and clips it to [0, out_w] x [0, out_h].
PixelBox transform_box(const PixelBox& box, const cv::Matx33d& m, bool perspective, float out_width,
                       float out_height);

// One point through M (homogeneous, divided by z as the reference's apply_keypoints does).
std::array<float, 2> transform_point(float x, float y, const cv::Matx33d& m);

// Keep a warped box if w2 > wh_thr and h2 > wh_thr px, w2 h2 / (w1 h1) > area_thr and
// max(w2/h2, h2/w2) < ar_thr. `before` is the original box already scaled by the draw's scale.
bool box_candidate(const PixelBox& before, const PixelBox& after, double wh_thr = 2.0,
                   double ar_thr = 100.0, double area_thr = 0.1);

// The part of an in_w x in_h input that warping to out_w x out_h with `m` can read: the output's
// corners mapped back, their bounding box widened by 2 px (bilinear reads the next pixel; the warp
// rounds coordinates to 1/32 px), clipped to the input. The whole input for a perspective warp.
// Pixels outside it never reach the output, so a mosaic only needs to be assembled inside it.
cv::Rect warp_source_region(const cv::Matx33d& m, int in_width, int in_height, int out_width,
                            int out_height, bool perspective);

// Warps `sample` with a fixed matrix (the testable core of random_perspective).
Sample warp_sample(const Sample& sample, const AffineDraw& draw, int out_width, int out_height,
                   bool perspective);

// The whole transform: output (w + 2 border) x (h + 2 border).
Sample random_perspective(const Sample& sample, int border, const AffineParams& params,
                          SampleRng& rng);

// The whole transform into an output of out_width x out_height (the input centred by C, placed by
// T): 8.4.190's RandomPerspective(size=(imgsz, imgsz)) on an image that is not a mosaic.
Sample random_perspective_to(const Sample& sample, int out_width, int out_height,
                             const AffineParams& params, SampleRng& rng);

}  // namespace trainer::data::augment
