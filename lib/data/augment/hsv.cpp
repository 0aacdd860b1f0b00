// HSV lookup tables and their application; see hsv.h.
#include "data/augment/hsv.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>

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

void apply_hsv(cv::Mat& bgr, const HsvLuts& luts) {
  cv::Mat table(1, 256, CV_8UC3);
  for (int x = 0; x < 256; ++x) table.at<cv::Vec3b>(0, x) = {luts.hue[x], luts.sat[x], luts.val[x]};
  cv::Mat hsv;
  cv::cvtColor(bgr, hsv, cv::COLOR_BGR2HSV);
  cv::LUT(hsv, table, hsv);  // one table per channel
  cv::cvtColor(hsv, bgr, cv::COLOR_HSV2BGR);
}

void random_hsv(cv::Mat& bgr, double hgain, double sgain, double vgain, SampleRng& rng) {
  if (hgain == 0.0 && sgain == 0.0 && vgain == 0.0) return;
  const double rh = rng.uniform(-1.0, 1.0) * hgain;
  const double rs = rng.uniform(-1.0, 1.0) * sgain;
  const double rv = rng.uniform(-1.0, 1.0) * vgain;
  apply_hsv(bgr, hsv_luts(rh, rs, rv));
}

}  // namespace trainer::data::augment
