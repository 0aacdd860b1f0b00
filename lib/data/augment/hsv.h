// Random HSV jitter in OpenCV's HSV space through lookup tables (the reference's RandomHSV).
//
// Why: colour augmentation must match the reference's arithmetic, which is easiest to check on the
// 256-entry tables themselves. Gains r = U(-1, 1) * (hgain, sgain, vgain); hue is additive,
// (x + r_h * 180) mod 180 (OpenCV hue is 0..179); saturation and value are multiplicative,
// clip(x * (1 + r), 0, 255); the saturation table keeps 0 at 0. Table values are truncated to
// uint8 as numpy's astype does.
#pragma once

#include <opencv2/core.hpp>

#include <array>
#include <cstdint>

#include "data/augment/sample_rng.h"

namespace trainer::data::augment {

struct HsvLuts {
  std::array<uint8_t, 256> hue{};
  std::array<uint8_t, 256> sat{};
  std::array<uint8_t, 256> val{};
};

// r_* are the drawn gains (already multiplied by hsv_h, hsv_s, hsv_v).
HsvLuts hsv_luts(double r_hue, double r_sat, double r_val);

// BGR -> HSV, the three tables, HSV -> BGR, in place.
void apply_hsv(cv::Mat& bgr, const HsvLuts& luts);

// The pixels of apply_hsv, then a horizontal flip when `mirror`, then BGR -> RGB, written into
// `rgb` (allocated when its size or type differs, else written in place): the table pass writes
// mirrored, and HSV converts straight to RGB, so the flip and the channel swap cost nothing.
void apply_hsv_to_rgb(const cv::Mat& bgr, const HsvLuts& luts, bool mirror, cv::Mat& rgb);

// Draws the three gains (hue, sat, val in that order) and applies them; no-op when all gains are 0.
void random_hsv(cv::Mat& bgr, double hgain, double sgain, double vgain, SampleRng& rng);

}  // namespace trainer::data::augment
