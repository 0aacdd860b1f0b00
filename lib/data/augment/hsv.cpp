// HSV lookup tables and their application; see hsv.h.
// Tested by tests/data/test_augment.cpp: HSV lookup tables, zero gains identity, equals per-pixel
//   OpenCV HSV lookup.
#include "data/augment/hsv.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>

#include "data/stage_profile.h"

namespace trainer::data::augment {

HsvLuts hsv_luts(double r_hue, double r_sat, double r_val) {
  HsvLuts l;
  for (int x = 0; x < 256; ++x) {
    double h = std::fmod(x + r_hue * 180.0, 180.0);
    if (h < 0) h += 180.0;  // Python's % takes the sign of the divisor
    l.hue[x] = static_cast<uint8_t>(h);
    l.sat[x] = static_cast<uint8_t>(std::clamp(x * (r_sat + 1.0), 0.0, 255.0));
    l.val[x] = static_cast<uint8_t>(std::clamp(x * (r_val + 1.0), 0.0, 255.0));
  }
  l.sat[0] = 0;
  return l;
}

namespace {

// The three tables, pixel by pixel from `hsv` into `out` (which may be `hsv` itself when not
// mirroring), left-right mirrored when `mirror`. By hand: cv::LUT with a 3-channel table took
// 1.0 ms on a 640 x 640 image here, longer than either colour conversion; this loop a third.
void map_tables(const cv::Mat& hsv, cv::Mat& out, const HsvLuts& luts, bool mirror) {
  out.create(hsv.size(), CV_8UC3);
  const uint8_t* hue = luts.hue.data();
  const uint8_t* sat = luts.sat.data();
  const uint8_t* val = luts.val.data();
  const ptrdiff_t step = mirror ? -3 : 3;
  for (int y = 0; y < hsv.rows; ++y) {
    const uint8_t* p = hsv.ptr<uint8_t>(y);
    const uint8_t* const end = p + 3 * static_cast<size_t>(hsv.cols);
    uint8_t* q = out.ptr<uint8_t>(y) + (mirror ? 3 * static_cast<size_t>(hsv.cols - 1) : 0);
    for (; p != end; p += 3, q += step) {
      q[0] = hue[p[0]];
      q[1] = sat[p[1]];
      q[2] = val[p[2]];
    }
  }
}

}  // namespace

void apply_hsv(cv::Mat& bgr, const HsvLuts& luts) {
  StageScope scope(Stage::kHsv);
  thread_local cv::Mat hsv;  // reused: one allocation per thread, not one per sample
  cv::cvtColor(bgr, hsv, cv::COLOR_BGR2HSV);
  map_tables(hsv, hsv, luts, false);
  cv::cvtColor(hsv, bgr, cv::COLOR_HSV2BGR);
}

void apply_hsv_to_rgb(const cv::Mat& bgr, const HsvLuts& luts, bool mirror, cv::Mat& rgb) {
  StageScope scope(Stage::kHsv);
  thread_local cv::Mat hsv, mapped;
  cv::cvtColor(bgr, hsv, cv::COLOR_BGR2HSV);
  map_tables(hsv, mapped, luts, mirror);
  cv::cvtColor(mapped, rgb, cv::COLOR_HSV2RGB);
}

void random_hsv(cv::Mat& bgr, double hgain, double sgain, double vgain, SampleRng& rng) {
  if (hgain == 0.0 && sgain == 0.0 && vgain == 0.0) return;
  const double rh = rng.uniform(-1.0, 1.0) * hgain;
  const double rs = rng.uniform(-1.0, 1.0) * sgain;
  const double rv = rng.uniform(-1.0, 1.0) * vgain;
  apply_hsv(bgr, hsv_luts(rh, rs, rv));
}

}  // namespace trainer::data::augment
