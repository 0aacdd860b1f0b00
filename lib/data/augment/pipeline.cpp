// The training and validation sample recipes; see pipeline.h.
// Tested by tests/data/test_augment.cpp: train_sample vs fused RGB train_sample_rgb path, mosaic
//   path equals mosaic4 + perspective.
#include "data/augment/pipeline.h"

#include <opencv2/imgproc.hpp>

#include "data/augment/affine.h"
#include "data/augment/copy_paste.h"
#include "data/augment/flip.h"
#include "data/augment/hsv.h"
#include "data/augment/mixup.h"
#include "data/augment/mosaic.h"

namespace trainer::data::augment {
namespace {

// Mosaic (or the single image) then random perspective: an s x s sample.
Sample mosaic_and_affine(int64_t index, const FetchSample& fetch, const PickPartner& pick,
                         const TrainRecipe& recipe, SampleRng& rng) {
  const int s = recipe.imgsz;
  const core::AugmentConfig& a = recipe.augment;
  const AffineParams params{a.degrees, a.translate, a.scale, a.shear, a.perspective};
  // copy_paste in flip mode runs between the mosaic and the warp, on every sample (no draw).
  const bool paste_flip =
      recipe.copy_paste_on && a.copy_paste > 0.0 && a.copy_paste_mode == core::CopyPasteMode::kFlip;
  if (recipe.mosaic_on && a.mosaic > 0.0 && rng.uniform() < a.mosaic) {
    const Sample first = fetch(index);
    Sample others[3];
    for (auto& other : others) other = fetch(pick(rng));
    // random_mosaic4 then random_perspective(-s/2), with the same draws in the same order, but
    // the canvas assembled only where the warp reads it, in a buffer the thread keeps.
    const int yc = static_cast<int>(rng.uniform(0.5 * s, 1.5 * s));
    const int xc = static_cast<int>(rng.uniform(0.5 * s, 1.5 * s));
    const int out = 2 * s - 2 * (s / 2);
    const bool perspective = a.perspective != 0.0;
    const AffineDraw draw = random_affine_matrix(2 * s, 2 * s, out, out, params, rng);
    thread_local cv::Mat canvas;
    // Mirrored pastes read the canvas anywhere: it is then assembled whole.
    const cv::Rect region =
        paste_flip ? cv::Rect(0, 0, 2 * s, 2 * s)
                   : warp_source_region(draw.matrix, 2 * s, 2 * s, out, out, perspective);
    Sample mosaic =
        mosaic4_into({&first, &others[0], &others[1], &others[2]}, s, xc, yc, region, canvas);
    if (paste_flip) copy_paste_flip(mosaic, a.copy_paste);
    return warp_sample(mosaic, draw, out, out, perspective);
  }
  // No mosaic: the image (long side s) goes straight into the warp, which centres it (C) and
  // translates it (T) into the s x s canvas, as 8.4.190 does: with an odd padding that is a
  // half-pixel shift, not a whole-pixel letterbox.
  const int out_w = recipe.out_width > 0 ? recipe.out_width : s;
  const int out_h = recipe.out_height > 0 ? recipe.out_height : s;
  Sample single = fetch(index);
  if (paste_flip) copy_paste_flip(single, a.copy_paste);
  return random_perspective_to(single, out_w, out_h, params, rng);
}

// Everything before the colour jitter: mosaic (or the single image), the warp, mixup.
Sample geometric_part(int64_t index, const FetchSample& fetch, const PickPartner& pick,
                      const TrainRecipe& recipe, SampleRng& rng) {
  const core::AugmentConfig& a = recipe.augment;
  Sample out = mosaic_and_affine(index, fetch, pick, recipe, rng);
  // copy_paste in mixup mode: another sample's objects, after the warp, with probability p.
  if (recipe.copy_paste_on && a.copy_paste > 0.0 &&
      a.copy_paste_mode == core::CopyPasteMode::kMixup && !out.segments.empty() &&
      rng.uniform() < a.copy_paste) {
    const int64_t donor = pick(rng);
    SampleRng donor_rng(rng.next_u64(), 0, donor, StreamPurpose::kCopyPaste);
    const Sample other = mosaic_and_affine(donor, fetch, pick, recipe, donor_rng);
    paste_objects(out, other, other.image, a.copy_paste);
  }
  if (recipe.mosaic_on && a.mixup > 0.0 && rng.uniform() < a.mixup) {
    const int64_t partner = pick(rng);
    SampleRng partner_rng(rng.next_u64(), 0, partner, StreamPurpose::kMixup);
    const Sample other = mosaic_and_affine(partner, fetch, pick, recipe, partner_rng);
    out = mixup(out, other, rng.beta(32.0, 32.0));
  }
  return out;
}

}  // namespace

Sample train_sample(int64_t index, const FetchSample& fetch, const PickPartner& pick,
                    const TrainRecipe& recipe, SampleRng& rng) {
  const core::AugmentConfig& a = recipe.augment;
  Sample out = geometric_part(index, fetch, pick, recipe, rng);
  random_hsv(out.image, a.hsv_h, a.hsv_s, a.hsv_v, rng);
  random_flips(out, a.flipud, a.fliplr, rng, recipe.flip_idx);
  return out;
}

Sample train_sample_rgb(int64_t index, const FetchSample& fetch, const PickPartner& pick,
                        const TrainRecipe& recipe, SampleRng& rng, cv::Mat& rgb) {
  const core::AugmentConfig& a = recipe.augment;
  Sample out = geometric_part(index, fetch, pick, recipe, rng);
  // The draws of random_hsv then random_flips, in their order, before any pixel moves.
  const bool hsv = a.hsv_h != 0.0 || a.hsv_s != 0.0 || a.hsv_v != 0.0;
  HsvLuts luts;
  if (hsv) {
    const double rh = rng.uniform(-1.0, 1.0) * a.hsv_h;
    const double rs = rng.uniform(-1.0, 1.0) * a.hsv_s;
    const double rv = rng.uniform(-1.0, 1.0) * a.hsv_v;
    luts = hsv_luts(rh, rs, rv);
  }
  const bool up_down = a.flipud > 0.0 && rng.uniform() < a.flipud;
  const bool left_right = a.fliplr > 0.0 && rng.uniform() < a.fliplr;
  // Per-pixel colour changes commute with flips, so the vertical flip may come first here.
  if (up_down) flip_vertical(out, recipe.flip_idx);
  if (left_right) flip_horizontal_labels(out, out.width(), recipe.flip_idx);
  if (hsv) {
    apply_hsv_to_rgb(out.image, luts, left_right, rgb);
  } else {
    cv::cvtColor(out.image, rgb, cv::COLOR_BGR2RGB);
    if (left_right) cv::flip(rgb, rgb, 1);
  }
  out.image = rgb;
  return out;
}

Sample val_sample(const Sample& resized, int out_height, int out_width,
                  LetterboxGeometry* geometry) {
  const LetterboxGeometry g =
      letterbox_geometry(resized.height(), resized.width(), out_height, out_width, false);
  if (geometry) *geometry = g;
  return letterbox(resized, g);
}

}  // namespace trainer::data::augment
