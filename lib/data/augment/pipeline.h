// The training-sample recipe (the reference's v8_transforms) and the validation letterbox.
//
// Why: one function says in which order the augmentations run and which random draws they use, so
// a sample depends only on (seed, epoch, index): mosaic with probability `mosaic` (partners from
// the recent-index window) else letterbox to imgsz x imgsz; random perspective (border -s/2 after
// mosaic, so the output is s x s); mixup with probability `mixup` (its partner built the same way
// from its own stream); HSV; vertical then horizontal flip. close_mosaic turns mosaic and mixup
// off.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/config.h"
#include "data/augment/letterbox.h"
#include "data/augment/sample.h"
#include "data/augment/sample_rng.h"

namespace trainer::data::augment {

// A dataset image at training size (long side imgsz) with its boxes in pixels of that image.
using FetchSample = std::function<Sample(int64_t index)>;
// Picks a mosaic/mixup partner index from the recent-index window.
using PickPartner = std::function<int64_t(SampleRng& rng)>;

struct TrainRecipe {
  int imgsz = 640;
  core::AugmentConfig augment;
  bool mosaic_on = true;        // false after close_mosaic (also turns mixup off)
  bool copy_paste_on = true;    // false after close_mosaic (rect training keeps it, as 8.4.190)
  std::vector<int> flip_idx{};  // pose: the keypoint permutation applied after a flip
  // Output size without mosaic (rect training: the batch's shape); 0 = imgsz.
  int out_height = 0;
  int out_width = 0;
};

Sample train_sample(int64_t index, const FetchSample& fetch, const PickPartner& pick,
                    const TrainRecipe& recipe, SampleRng& rng);

// train_sample with the pixels written as RGB into `rgb` (a batch slot of the output size; the
// returned sample's image is `rgb`): the same draws and pixels, the colour jitter, flip and channel
// swap fused (apply_hsv_to_rgb). The loader's path; train_sample is its oracle in the tests.
Sample train_sample_rgb(int64_t index, const FetchSample& fetch, const PickPartner& pick,
                        const TrainRecipe& recipe, SampleRng& rng, cv::Mat& rgb);

// Validation: letterbox to out_h x out_w without upscaling (scaleup=false). `geometry` receives
// the letterbox parameters.
Sample val_sample(const Sample& resized, int out_height, int out_width,
                  LetterboxGeometry* geometry);

}  // namespace trainer::data::augment
