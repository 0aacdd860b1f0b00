// See synthetic_canvas.h.
#include "demo/synthetic_canvas.h"

#include <opencv2/imgproc.hpp>

namespace trainer::demo {

cv::Mat textured_background(int size, Rng& rng) {
  cv::Mat small(4, 4, CV_8UC3);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) {
      small.at<cv::Vec3b>(y, x) = cv::Vec3b(static_cast<uchar>(rng.integer(40, 215)),
                                            static_cast<uchar>(rng.integer(40, 215)),
                                            static_cast<uchar>(rng.integer(40, 215)));
    }
  }
  cv::Mat image;
  cv::resize(small, image, cv::Size(size, size), 0, 0, cv::INTER_CUBIC);
  const int stripes = rng.integer(0, 6);
  for (int i = 0; i < stripes; ++i) {
    cv::Point a(rng.integer(0, size), rng.integer(0, size));
    cv::Point b(rng.integer(0, size), rng.integer(0, size));
    cv::line(image, a, b, rng.colour(), rng.integer(1, 3), cv::LINE_AA);
  }
  cv::Mat noise(size, size, CV_8UC3);
  for (int y = 0; y < size; ++y) {
    auto* row = noise.ptr<cv::Vec3b>(y);
    for (int x = 0; x < size; ++x) {
      const auto n = static_cast<uchar>(rng.integer(0, 24));
      row[x] = cv::Vec3b(n, n, n);
    }
  }
  cv::add(image, noise, image);
  return image;
}

}  // namespace trainer::demo
